#!/bin/bash
# t0901: chaos relays on two-route namespace nodes, as issue 11's udp tests will use them: n1
# sends datagrams to relay A in the root namespace (one pair per route, listening on the route's
# gateway), A forwards them to n2's address on that route, where relay B counts what arrives.
# Proves tests/lib/chaos.sh, that each route's traffic crosses its own relay pair, that A's
# "forwarded" is what B receives (drop knob), that a route taken down inside n2 loses what A sends
# on it while the other route keeps going, and that it carries traffic again once up.
# timeout: 120
. "$(dirname "$0")/../lib/common.sh"
[ "$(id -u)" = 0 ] || skip_all "needs root (network namespaces)"
command -v sshd >/dev/null || [ -x /usr/sbin/sshd ] || skip_all "no sshd"
. "$LAMKIT_TOP/tests/lib/netns.sh"
. "$LAMKIT_TOP/tests/lib/chaos.sh"
[ -x "$CHAOS_RELAY" ] || skip_all "no $CHAOS_RELAY"
at_exit netns_down
at_exit chaos_stop_all # runs first: relays on n2 go before the namespace
netns_up 2 2 || { ok 1 "netns_up 2 2"; done_testing; }
export CHAOS_DIR=$T/chaos
mkdir -p "$CHAOS_DIR"
# shellcheck disable=SC2154 # set by netns_up
a0=$NETNS_ADDR_n2 a1=$NETNS_ADDR2_n2

CHAOS_EXEC="netns_exec n2" chaos_start B --listen "$a0:7000" --to 127.0.0.1:9 --listen "$a1:7001" --to 127.0.0.1:9
ok $? "relay B inside n2 on $a0:7000 and $a1:7001"
chaos_start A --seed 11 --listen "$(netns_route_gw 0):0" --to "$a0:7000" --drop 0.3 \
	--listen "$(netns_route_gw 1):0" --to "$a1:7001"
ok $? "relay A in the root namespace, one pair per route (pair 0 drops 30 %)"
p0=$(chaos_port A 0) p1=$(chaos_port A 1)
like "$p0 $p1" '^[0-9]+ [0-9]+$' "A's ports read back from its ready file ($p0, $p1)"
pidA=${_chaos_pid[A]} pidB=${_chaos_pid[B]}
is "$(ps -o comm= -p "$pidB")" chaos-relay "B's pid from its ready file is the relay"
is "$(ip netns identify "$pidB")" "$(netns_ns n2)" "B runs in n2's network namespace"

# send N GW PORT: n1 sends N numbered datagrams to GW:PORT (bash /dev/udp), paced.
send() { # shellcheck disable=SC2016 # the loop runs in bash -c on n1
	netns_exec n1 timeout 30 bash -c 'for ((i = 1; i <= $1; i++)); do
		echo "datagram $i" >"/dev/udp/$2/$3" || exit 1; ((i % 20)) || sleep 0.01; done' send "$@"
}
# settle NAME PAIR KEY WANT: wait (5 s) until the counter is WANT; print its last value.
settle() {
	local v i
	for ((i = 0; i < 50; i++)); do
		v=$(chaos_stat "$1" "$2" "$3")
		[ "$v" = "$4" ] && break
		sleep 0.1
	done
	echo "$v"
}

send 200 "$(netns_route_gw 1)" "$p1"
ok $? "n1 sends 200 datagrams to A's route-1 pair"
is "$(settle B 1 received 200)" 200 "B's route-1 pair receives all 200 (no faults on that route)"
is "$(chaos_stat A 1 forwarded)/$(chaos_stat B 0 received)" "200/0" "A forwarded 200 on route 1, B saw nothing on route 0"

send 200 "$(netns_route_gw 0)" "$p0"
ok $? "n1 sends 200 datagrams to A's route-0 pair"
fw=$(chaos_stat A 0 forwarded) dr=$(chaos_stat A 0 dropped)
is "$(settle B 0 received "$fw")" "$fw" "B's route-0 pair receives exactly what A forwarded ($fw, $dr dropped)"
ok "$([ $((fw + dr)) = 200 ] && [ "$dr" -ge 30 ] && [ "$dr" -le 90 ]; echo $?)" "A's route-0 pair: forwarded + dropped = 200, dropped $dr within 5 sigma of 60"

netns_route_down n2 1
send 100 "$(netns_route_gw 1)" "$p1"
ok $? "n2's eth1 down: n1 still sends 100 to A's route-1 pair (n1's eth1 is up)"
is "$(settle A 1 received 300)" 300 "A receives them"
sleep 0.5
is "$(chaos_stat B 1 received)" 200 "B gets none of them: the route is down inside n2"
send 50 "$(netns_route_gw 0)" "$p0"
fw2=$(chaos_stat A 0 forwarded)
is "$(settle B 0 received "$fw2")" "$fw2" "route 0 keeps working meanwhile ($((fw2 - fw)) more through)"

netns_route_up n2 1
t0=${EPOCHREALTIME/./}
got=200
for ((i = 0; i < 40 && got == 200; i++)); do
	send 5 "$(netns_route_gw 1)" "$p1"
	got=$(chaos_stat B 1 received)
done
ms=$(((${EPOCHREALTIME/./} - t0) / 1000))
ok "$([ "$got" -gt 200 ]; echo $?)" "n2's eth1 up: route 1 carries datagrams again after $ms ms"
before=$(settle B 1 received "$got")
send 100 "$(netns_route_gw 1)" "$p1"
is "$(settle B 1 received $((before + 100)))" $((before + 100)) "and all of the next 100"

chaos_stop B
ok $? "B stops on SIGTERM"
chaos_stop A
ok $? "A stops on SIGTERM"
like "$(head -n 1 "$CHAOS_DIR/A.stats")" "reason=sigterm" "A's final report is written"
sent=$(chaos_stat A 1 received) fwd=$(chaos_stat A 1 forwarded) err=$(chaos_stat A 1 send_errors)
ok "$([ $((fwd + err)) = "$sent" ]; echo $?)" "A's route-1 pair accounts for every datagram ($sent = $fwd forwarded + $err send errors)"
pids_gone "$pidA" "$pidB"
ok $? "no relay left running"
done_testing
