#!/bin/bash
# shellcheck source-path=SCRIPTDIR disable=SC2016
# tests/integration/t0900-netns-selftest.sh: proves tests/lib/netns.sh (3 namespace nodes with sshd).
# Needs root; exits 77 (skip) otherwise. Prints TAP-ish lines, exits 1 on any failure.
set -u
if [ "$(id -u)" != 0 ]; then
	echo "1..0 # SKIP t0900: needs root (network namespaces)"
	exit 77
fi
# Overall watchdog: re-exec under timeout; TERM runs the EXIT trap (netns_down).
if [ -z "${LK_T0900_WATCHED-}" ]; then
	LK_T0900_WATCHED=1 exec timeout -k 20 90 "$0" "$@"
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

t1=$(now) fails=0 bg=
for _ in $(seq 16); do
	lkssh n1 true &
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

echo "1..$n"
[ "$failed" = 0 ] || { echo "# $failed of $n failed"; exit 1; }
exit 0
