#!/bin/bash
# shellcheck source-path=SCRIPTDIR disable=SC2016
# tests/integration/t0900-netns-selftest.sh: proves tests/lib/netns.sh (3 namespace nodes with sshd,
# then 2 nodes with two routes each: both routes carry traffic, one goes down and up, tbf shapes it).
# Needs root; exits 77 (skip) otherwise. Prints TAP-ish lines, exits 1 on any failure.
set -u
if [ "$(id -u)" != 0 ]; then
	echo "1..0 # SKIP t0900: needs root (network namespaces)"
	exit 77
fi
# Overall watchdog: re-exec under timeout; TERM runs the EXIT trap (netns_down).
if [ -z "${LK_T0900_WATCHED-}" ]; then
	LK_T0900_WATCHED=1 exec timeout -k 20 150 "$0" "$@"
fi

here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../lib/netns.sh
. "$here/../lib/netns.sh"

n=0 failed=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
notok() { n=$((n + 1)) failed=$((failed + 1)); echo "not ok $n - $*"; }
check() { # check "what" cmd...: ok if cmd succeeds
	local what=$1
	shift
	if "$@"; then ok "$what"; else notok "$what"; fi
}
now() { echo "${EPOCHREALTIME/./}"; } # microseconds
ms() { echo $((($2 - $1) / 1000)); }
lkssh() { timeout -k 2 20 ssh -F "$NETNS_SSH_CONFIG" "$@"; }

trap netns_down EXIT
trap 'exit 130' INT TERM

t0=$(now)
if ! netns_up 3; then
	notok "netns_up 3"
	exit 1
fi
ok "netns_up 3 ($(ms "$t0" "$(now)") ms, subnet $NETNS_SUBNET.0/24, dir $NETNS_DIR)"
dir=$NETNS_DIR prefix=$NETNS_PREFIX subnet=$NETNS_SUBNET
# shellcheck disable=SC2154 # assigned by netns_up via eval
check "exports: NETNS_NODES='$NETNS_NODES', n2 at $NETNS_ADDR_n2" \
	test "$NETNS_NODES" = "n1 n2 n3" -a "$(netns_addr n2)" = "$NETNS_SUBNET.12" \
	-a "$NETNS_ADDR_n2" = "$NETNS_SUBNET.12" -a -f "$NETNS_HOSTS" -a -f "$NETNS_SSH_CONFIG"
pids=
for node in $NETNS_NODES; do pids="$pids $(netns_sshd_pid "$node") $(_netns_holder_pid "$node")"; done

for node in $NETNS_NODES; do
	out=$(lkssh "$node" 'echo "$(id -u) $(hostname) $(hostname -I)"' 2>&1)
	check "ssh $node: root, hostname and address ($out)" \
		test "$out" = "0 $node $(netns_addr "$node") "
done

out=$(lkssh n1 'echo "$HOME"' 2>&1)
check "ssh sessions get the private HOME, not root's ~/.bashrc ($out)" test "$out" = "$NETNS_NODE_HOME"

script=$dir/made-after-up.sh
printf '#!/bin/sh\necho host-fs-ok "$@"\n' >"$script" && chmod +x "$script"
out=$(lkssh n1 "$script" x 2>&1)
check "sshd on a node execs files of the host filesystem ($out)" test "$out" = "host-fs-ok x"

out=$(lkssh n1 'getent hosts n2 n0' 2>&1 | tr -s ' \n' '  ')
check "node resolves n2 and n0 via the private hosts file ($out)" \
	test "$out" = "$NETNS_SUBNET.12 n2 $NETNS_BRIDGE_ADDR n0 $(hostname) "

out=$(lkssh n1 "timeout 3 bash -c 'exec 3<>/dev/tcp/n3/22 && head -c 7 <&3'" 2>&1)
check "n1 reaches n3's sshd over the bridge ($out)" test "$out" = "SSH-2.0"

out=$(netns_exec n2 timeout 5 sh -c 'echo "$(hostname) $(pwd)"; cat /proc/self/net/fib_trie' 2>&1)
check "netns_exec n2: hostname, cwd kept, sees its address" \
	test "$(echo "$out" | head -n 1)" = "n2 $PWD" -a -n "$(echo "$out" | grep -F "$NETNS_SUBNET.12")"

check "one route by default: no eth1 on n1" test -z "$(netns_exec n1 ip -o link show eth1 2>/dev/null)"

# each under its own 60 s: on a loaded machine 16 handshakes at once take a while
t1=$(now) fails=0 bg=
for _ in $(seq 16); do
	timeout -k 2 60 ssh -F "$NETNS_SSH_CONFIG" n1 true &
	bg="$bg $!"
done
for p in $bg; do wait "$p" || fails=$((fails + 1)); done
check "16 parallel ssh to n1 ($(ms "$t1" "$(now)") ms, $fails failed)" test "$fails" = 0

times=
for _ in 1 2 3 4 5; do
	t1=$(now)
	lkssh n1 true
	times="$times $(ms "$t1" "$(now)")"
done
echo "# ssh -F cfg n1 true, ms:$times"

netns_block n3
t1=$(now)
lkssh n3 true 2>/dev/null
rc=$? el=$(ms "$t1" "$(now)")
check "blocked n3: ssh fails (rc $rc) within ConnectTimeout ($el ms)" test "$rc" != 0 -a "$el" -lt 7000
check "blocked n3: n2 still reachable" lkssh n2 true
netns_unblock n3
check "unblocked n3: ssh works again" lkssh n3 true

t1=$(now)
netns_down
el=$(ms "$t1" "$(now)")
left=$(ip netns list | grep -E "^${prefix}n[0-9]+( |\$)")
check "netns_down ($el ms): no namespace left ($left)" test -z "$left"
alive=
for p in $pids; do # a zombie waiting for pid 1 to reap it counts as gone
	st=$(cut -d' ' -f3 "/proc/$p/stat" 2>/dev/null)
	[ -n "$st" ] && [ "$st" != Z ] && alive="$alive $p:$st"
done
check "no sshd or holder process left ($alive)" test -z "$alive"
left=$(ip -o link show | grep -E ": ${prefix}(v[0-9]+|br)[@:]")
check "no veth or bridge left ($left)" test -z "$left"
check "temp dir removed" test ! -e "$dir"
check "no address of the subnet left" test -z "$(ip -4 -o addr show | grep -F " $subnet.")"
netns_down
check "netns_down is idempotent" test -z "$(ip netns list | grep -E "^${prefix}n")"

# ---- two routes per node
# tcp_reach NODE ADDR: NODE (or the root namespace for n0) connects to sshd at ADDR within 2 s.
tcp_reach() {
	local c="timeout 2 bash -c 'exec 3<>/dev/tcp/$2/22 && head -c 7 <&3' 2>/dev/null"
	if [ "$1" = n0 ]; then out=$(eval "$c"); else out=$(netns_exec "$1" bash -c "$c"); fi
	[ "$out" = SSH-2.0 ]
}
dir1=$dir
t0=$(now)
if ! netns_up 2 2; then
	notok "netns_up 2 2"
	exit 1
fi
ok "netns_up 2 2 ($(ms "$t0" "$(now)") ms, subnets $NETNS_SUBNET.0/24 and $NETNS_SUBNET2.0/24)"
dir=$NETNS_DIR subnet=$NETNS_SUBNET subnet2=$NETNS_SUBNET2
# shellcheck disable=SC2154 # assigned by netns_up via eval
check "exports: NETNS_ROUTES=$NETNS_ROUTES, n2 at $NETNS_ADDR2_n2 on route 1, gateways" \
	test "$NETNS_ROUTES" = 2 -a "$(netns_route_addr n2 1)" = "$NETNS_SUBNET2.12" \
	-a "$NETNS_ADDR2_n2" = "$NETNS_SUBNET2.12" -a "$(netns_route_addr n2 0)" = "$NETNS_SUBNET.12" \
	-a "$(netns_route_gw 1)" = "$NETNS_SUBNET2.1" -a "$(netns_route_gw 0)" = "$NETNS_BRIDGE_ADDR" \
	-a "${NETNS_SUBNET2%.*}" = 10.89
check "route 2 is refused" test -z "$(netns_route_addr n1 2 2>/dev/null)"
out=$(lkssh n1 'ip -4 -o addr show dev eth1' 2>&1)
check "n1 has eth1 with $NETNS_SUBNET2.11 ($out)" test -n "$(echo "$out" | grep -F " $NETNS_SUBNET2.11/24 ")"
out=$(netns_exec n1 ip -4 route get "$NETNS_SUBNET2.12" 2>&1)
check "n1 sends to n2's route-1 address over eth1 ($out)" test -n "$(echo "$out" | grep ' dev eth1 ')"
check "n1 reaches n2 over route 0" tcp_reach n1 "$NETNS_SUBNET.12"
check "n1 reaches n2 over route 1" tcp_reach n1 "$NETNS_SUBNET2.12"
check "the root namespace reaches n2 over route 1 (from $(netns_route_gw 1))" tcp_reach n0 "$NETNS_SUBNET2.12"

netns_route_down n2 1
check "n2 route 1 down: eth1 is DOWN" test -n "$(ip -n "$(netns_ns n2)" -o link show eth1 | grep 'state DOWN')"
t1=$(now)
tcp_reach n1 "$NETNS_SUBNET2.12"
rc=$?
check "n2 route 1 down: n1 cannot reach n2 on it (rc $rc, $(ms "$t1" "$(now)") ms)" test "$rc" != 0
check "n2 route 1 down: n1 still reaches n2 over route 0" tcp_reach n1 "$NETNS_SUBNET.12"
out=$(netns_exec n2 ip -4 route get "$NETNS_BRIDGE2_ADDR" 2>&1)
check "n2 route 1 down: n2 has no way to route 1's gateway, not even over eth0 ($out)" \
	test -z "$(echo "$out" | grep ' dev ')"
out=$(netns_exec n2 bash -c "echo x >/dev/udp/$NETNS_BRIDGE2_ADDR/9" 2>&1)
check "n2 route 1 down: a datagram to it fails at once ($out)" test -n "$(echo "$out" | grep -i "no route to host")"
check "n2 route 1 down: ssh n2 still works" lkssh n2 true
netns_route_up n2 1
got=0
for _ in $(seq 50); do # the link comes up within a few 10 ms
	tcp_reach n1 "$NETNS_SUBNET2.12" && got=1 && break
	sleep 0.1
done
check "n2 route 1 up again: n1 reaches n2 on it" test "$got" = 1

netns_route_down n1 0
check "n1 route 0 down: no route from n1 to n2's eth0 address" \
	test -z "$(netns_exec n1 ip -4 route get "$NETNS_SUBNET.12" 2>/dev/null)"
check "n1 route 0 down: n1 reaches n2 over route 1" tcp_reach n1 "$NETNS_SUBNET2.12"
netns_route_up n1 0
check "n1 route 0 up: default route back" test -n "$(netns_exec n1 ip -4 route show default | grep eth0)"
got=0
for _ in $(seq 50); do
	lkssh n1 true && got=1 && break
	sleep 0.1
done
check "n1 route 0 up: ssh n1 works again" test "$got" = 1

# tbf: 2 MB at 8 Mbit/s takes >= 2 s minus one 64 kB burst; the same over route 0 is the baseline.
head -c 2000000 /dev/urandom >"$dir/2mb"
xfer() { # xfer ADDR DIRECTION: time (ms) 2 MB to (in) or from (out) n2 over ssh to ADDR
	local t
	t=$(now)
	if [ "$2" = in ]; then
		lkssh "$1" 'cat >/dev/null' <"$dir/2mb" || return 1
	else
		lkssh "$1" "cat $dir/2mb" >/dev/null || return 1
	fi
	ms "$t" "$(now)"
}
netns_route_rate n2 1 8mbit
check "tbf on n2 eth1 and its root-side veth" \
	test -n "$(netns_exec n2 tc qdisc show dev eth1 | grep 'tbf.*rate 8Mbit')" \
	-a -n "$(tc qdisc show dev "${NETNS_PREFIX}w2" | grep 'tbf.*rate 8Mbit')"
base=$(xfer "$NETNS_SUBNET.12" in)
shaped_in=$(xfer "$NETNS_SUBNET2.12" in)
shaped_out=$(xfer "$NETNS_SUBNET2.12" out)
check "tbf 8mbit: 2 MB into n2 over route 1 took $shaped_in ms (>= 1800; route 0: $base ms)" \
	test "${shaped_in:-0}" -ge 1800 -a "${base:-99999}" -lt "${shaped_in:-0}"
check "tbf 8mbit: 2 MB out of n2 over route 1 took $shaped_out ms (>= 1800)" test "${shaped_out:-0}" -ge 1800
netns_route_rate n2 1 off
check "rate off: no tbf left" test -z "$(netns_exec n2 tc qdisc show dev eth1 | grep tbf)$(tc qdisc show dev "${NETNS_PREFIX}w2" | grep tbf)"
quick=$(xfer "$NETNS_SUBNET2.12" in)
check "rate off: 2 MB over route 1 in $quick ms (faster than shaped)" test "${quick:-99999}" -lt "${shaped_in:-0}"

netns_down
left=$(ip -o link show | grep -E ": ${prefix}([vw][0-9]+|br|br2)[@:]")
check "two routes: netns_down leaves no veth or bridge ($left)" test -z "$left"
check "two routes: no address of either subnet left" \
	test -z "$(ip -4 -o addr show | grep -F -e " $subnet2." -e " $subnet.")" -a ! -e "$dir"
check "a second netns_up in one shell leaves the first run's temp dir gone" test ! -e "$dir1"

echo "1..$n"
[ "$failed" = 0 ] || { echo "# $failed of $n failed"; exit 1; }
exit 0
