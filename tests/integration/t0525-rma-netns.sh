#!/bin/bash
# t0525: one-sided communication of lamkit's own MPI across namespace nodes booted over ssh:
# lk_rma (every window flavour, fence, PSCW, locks, atomics, derived and pair types) and
# lk_rma_nodes (1 MiB transfers, request-based operations, flushes, lock_all NOCHECK,
# fetch_and_op / compare_and_swap, passive-target updates while the target computes, each
# bounded to 10 s, where none would take 20) on 2 nodes (one rank each, and two each: a window mixing shared memory and
# active messages) and on 4 nodes (one and two ranks each); and lk_inbc (nonblocking
# collectives on an intercommunicator) on 4 nodes.
# timeout: 300
. "$(dirname "$0")/../lib/common.sh"
[ "$(id -u)" = 0 ] || skip_all "needs root (network namespaces)"
command -v sshd >/dev/null || [ -x /usr/sbin/sshd ] || skip_all "no sshd"
D=$LAMKIT_TOP/out/mpi-lamkit
[ "$LAMKIT_VARIANT" = asan ] && D=$LAMKIT_TOP/out/asan/mpi-lamkit
[ -x "$D/lk_rma_nodes" ] || skip_all "own MPI test programs not built"
lkmpi_before=$(ls /dev/shm | grep '^lkmpi-' | sort)
. "$LAMKIT_TOP/tests/lib/netns.sh"
at_exit netns_down
K=4
netns_up $K || { ok 1 "netns_up $K"; done_testing; }
U="$LAMKIT_TMPDIR/lamkit-$(id -u)/universe"
at_exit '[ -f "$U" ] && timeout 30 "$LAMKIT" wipe >/dev/null 2>&1'
lk() { (cd "$T" && timeout -k 5 60 "$LAMKIT" "$@"); }
{
	echo 'boot = "ssh"; algorithm = "windowed"; timeout = 15'
	echo "ssh = { options = { \"-F\", \"$NETNS_SSH_CONFIG\" }, verify = false }"
	echo "defaults = { program = \"$LAMKIT\" }"
	echo "for i = 1, $K do node(\"n\" .. i) { cpu = 2 } end"
} >"$T/u.lua"
lk boot u.lua >/dev/null 2>&1
is $? 0 "universe of $K nodes booted over ssh"
agents=$([ -f "$U" ] && awk '$1 == "node" { print $8 }' "$U" | tr '\n' ' ')

# placements: ranks per node x nodes
for pl in "2 --map-by node" "4 -ppn 2" "4 --map-by node" "8 -ppn 2"; do
	n=${pl%% *}
	for p in lk_rma lk_rma_nodes; do
		# shellcheck disable=SC2086 # the placement options
		out=$(LKX_TIMEOUT=120 lkx -n $pl "$D/$p" 2>&1); rc=$?
		is "$rc" 0 "$p -n $pl across the nodes exits 0"
		like "$out" "$p: OK size=$n" "$p -n $pl: every check passes"
	done
done
# nonblocking collectives on an intercommunicator whose groups interleave across the nodes
out=$(LKX_TIMEOUT=120 lkx -n 8 -ppn 2 "$D/lk_inbc" 2>&1)
like "$out" "lk_inbc: OK size=8" "lk_inbc -n 8 -ppn 2: intercommunicator nonblocking collectives match the blocking ones"

lk halt >/dev/null 2>&1
is $? 0 "halt"
# shellcheck disable=SC2086 # a list of pids
wait_gone 10 $agents
ok $? "every agent gone"
is "$(lkmpi_leaked "$lkmpi_before")" "" "no lkmpi shared-memory segment left"
done_testing
