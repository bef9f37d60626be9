#!/bin/bash
# t0365: topology through PMI (lamkit's extension, both wire versions): each rank's node, and
# with --bind-to core its socket and core, checked by the rank against its own
# sched_getaffinity and /sys and against every other rank's answer (tests/pmi/pmi_topo.c),
# and the node groups against the placement, on one agent and on two; lamkit's MPI splits by
# node, socket and core from it; under Hydra (no such extension) the node comes from the
# clique on both wires; a singleton reports its own binding.
# timeout: 120
. "$(dirname "$0")/../lib/common.sh"
P=$LAMKIT_TOP/out/testprogs/pmi_topo
M=$LAMKIT_TOP/out/mpi-lamkit/split_type
if [ "$LAMKIT_VARIANT" = asan ]; then
	[ -x "$LAMKIT_TOP/out/asan/testprogs/pmi_topo" ] && P=$LAMKIT_TOP/out/asan/testprogs/pmi_topo
	[ -x "$LAMKIT_TOP/out/asan/mpi-lamkit/split_type" ] && M=$LAMKIT_TOP/out/asan/mpi-lamkit/split_type
fi
[ -x "$P" ] && [ -x "$M" ] || skip_all "test programs not built"
export LKX_TIMEOUT=30

# nodes OUTPUT: "rank:node:ranks" of every rank, sorted by rank
nodes() { printf '%s\n' "$1" | sed -n 's/^topo rank=\([0-9]*\) node=\([-0-9]*\) ranks=\([0-9,]*\) .*/\1:\2:\3/p' | sort -n | tr '\n' ' '; }
# check TAG N OUTPUT RC: every rank exited 0 and said OK
check() {
	is "$4 $(printf '%s\n' "$3" | grep -c ' OK$')" "0 $2" "$1: $2 ranks agree with /sys and with each other"
	printf '%s\n' "$3" | grep -q FAIL && diag "$3"
}

for wire in 1 2; do
	export LAMKIT_PMI_VERSION=$wire
	out=$(lkx -n 4 --bind-to core "$P" bound 2>&1); rc=$?
	check "[PMI-$wire] one agent, --bind-to core" 4 "$out" $rc
	is "$(nodes "$out")" "0:0:0,1,2,3 1:0:0,1,2,3 2:0:0,1,2,3 3:0:0,1,2,3 " "[PMI-$wire] one node with every rank"
	is "$(printf '%s\n' "$out" | grep -c ' socket=[0-9]* sranks=[0-9,]* core=[0-9]* cranks=[0-9,]* attr=yes OK$')" 4 \
		"[PMI-$wire] each rank has its socket and core, and the node attribute"
	out=$(lkx --local-agents 2:2 --map-by node -n 4 "$P" unbound 2>&1); rc=$?
	check "[PMI-$wire] two agents, map by node, not bound" 4 "$out" $rc
	is "$(nodes "$out")" "0:0:0,2 1:1:1,3 2:0:0,2 3:1:1,3 " "[PMI-$wire] node numbers and groups follow the placement"
	out=$(lkx --local-agents 2 -ppn 2 --bind-to core -n 4 "$P" bound 2>&1); rc=$?
	check "[PMI-$wire] two agents, -ppn 2, --bind-to core" 4 "$out" $rc
	is "$(nodes "$out")" "0:0:0,1 1:0:0,1 2:1:2,3 3:1:2,3 " "[PMI-$wire] bound ranks: the node groups still follow the placement"
done
unset LAMKIT_PMI_VERSION

# lamkit's MPI: MPI_COMM_TYPE_SHARED and Open MPI's socket/core types from the same answers
out=$(lkx --local-agents 2 -ppn 2 --bind-to core -n 4 "$M" 2>&1 | sort); rc=$?
is "$rc $(printf '%s\n' "$out" | sed -n 's/^split: rank \([0-9]*\) node \(\[[0-9,]*\]\) .*/\1\2/p' | tr '\n' ' ')" \
	"0 0[0,1] 1[0,1] 2[2,3] 3[2,3] " "MPI: shared-memory groups are the agents' ranks"
is "$(printf '%s\n' "$out" | grep -c 'socket \[[0-9,]*\] core \[[0-9,]*\]$')" 4 "MPI: bound ranks get socket and core communicators"
out=$(lkx --local-agents 2:2 --map-by node -n 4 "$M" 2>&1 | sort)
is "$(printf '%s\n' "$out" | sed 's/^split: rank //' | tr '\n' ' ')" \
	"0 node [0,2] socket null core null 1 node [1,3] socket null core null 2 node [0,2] socket null core null 3 node [1,3] socket null core null " \
	"MPI: not bound: node groups by placement, no socket or core communicator"

if command -v mpiexec.hydra >/dev/null; then
	for wire in 1 2; do
		out=$(cd "$T" && LAMKIT_PMI_VERSION=$wire timeout -k 5 30 mpiexec.hydra -n 3 "$P" any 2>&1); rc=$?
		check "[Hydra, PMI-$wire] fallback" 3 "$out" $rc
		is "$(nodes "$out")" "0:0:0,1,2 1:0:0,1,2 2:0:0,1,2 " "[Hydra, PMI-$wire] the node from PMI_process_mapping"
		is "$(printf '%s\n' "$out" | grep -c 'attr=no OK$')" 3 "[Hydra, PMI-$wire] Hydra has no lamkit_topo attribute"
		out=$(cd "$T" && LAMKIT_PMI_VERSION=$wire timeout -k 5 30 mpiexec.hydra -n 3 "$M" 2>&1 | sort)
		is "$(printf '%s\n' "$out" | grep -c 'node \[0,1,2\] socket null core null$')" 3 "[Hydra, PMI-$wire] MPI: one node of 3"
	done
else
	ok 0 "# SKIP mpiexec.hydra not installed"
fi

# a singleton: its own binding
first=$(awk '/^Cpus_allowed_list/ { split($2, a, /[-,]/); print a[1] }' /proc/self/status)
out=$(cd "$T" && timeout 10 taskset -c "$first" "$P" bound 2>&1); rc=$?
like "$rc $out" "^0 topo rank=0 node=0 ranks=0 socket=[0-9]+ sranks=0 core=[0-9]+ cranks=0 attr=yes OK$" "singleton bound to CPU $first: its socket and core"
out=$(cd "$T" && timeout 10 "$P" any 2>&1); rc=$?
like "$rc $out" "^0 topo rank=0 node=0 ranks=0 .*OK$" "singleton: node 0 of its own"
done_testing
