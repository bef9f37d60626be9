#!/bin/bash
# t0540: PMI spawn served by lamkit mpiexec and the agents (doc/PROTOCOL-agent.md, "Spawn"):
# pmi_spawn (tests/pmi) does what an MPI library does for MPI_Comm_spawn (preput port, children
# connect to it) over PMI-1 and PMI-2; parents and children talk both ways; collective and
# multi-command spawns; a child exiting 3 fails the job with one line naming it; a spawn larger
# than the free slots is refused with one line; on 4 ssh namespace nodes the children go to
# the free slots of other nodes (or the host asked for); names published by one job are found
# by later jobs on other nodes (the head agent's name service); nothing is left after halt. Debian's
# MPICH (ch4:ucx) cannot spawn at all: it fails the same way under lamkit as under Hydra.
# timeout: 150
. "$(dirname "$0")/../lib/common.sh"
P=$LAMKIT_TOP/out/testprogs/pmi_spawn
[ "$LAMKIT_VARIANT" = asan ] && P=$LAMKIT_TOP/out/asan/testprogs/pmi_spawn
[ -x "$P" ] || P=$LAMKIT_TOP/out/testprogs/pmi_spawn
left() { pgrep -f "^$P" | tr '\n' ' '; }
lines() { printf '%s\n' "$1" | grep -c -- "$2"; }

# the PMI paper's PMI_Spawn: the new job's KVS name comes back (lamkit's spawn_result says it);
# its iterators and PMI_Args_to_info (tests/pmi/pmi_paper.c)
PP=${P%/*}/pmi_paper
for v in 1 2; do
	walk=; [ $v = 2 ] && walk=nowalk
	out=$(LAMKIT_PMI_VERSION=$v LKX_TIMEOUT=30 lkx --local -n 2 "$PP" $walk 2>&1); rc=$?
	name=$(printf '%s\n' "$out" | sed -n 's/^paper: spawned 2 as KVS //p')
	is "$rc:$(lines "$out" "^paper: child [01] of KVS $name\$")" "0:2" \
		"[PMI-$v] the paper's PMI_Spawn: both children run in the KVS it named ($name)"
done
like "$(LAMKIT_PMI_VERSION=1 LKX_TIMEOUT=30 lkx --local -n 2 "$PP" 2>&1)" "paper: walked [0-9]+ pairs, mine OK" \
	"the paper's PMI_KVS_iter_first/_next walk the job's KVS"

# one node, the local agent
out=$(LKX_TIMEOUT=30 lkx --local -n 1 "$P" 2>&1); rc=$?
is "$rc" 0 "-n 1 spawns 2 children, all exit 0"
is "$(lines "$out" 'child [01] of 2 (app0) on .*: parent said 10[01]')" 2 "each child heard its parent"
is "$(lines "$out" 'parent: child [01] said hello')" 2 "the parent heard each child"
[ "$rc" = 0 ] || diag "$out"
for v in 1 2; do
	out=$(LAMKIT_PMI_VERSION=$v LKX_TIMEOUT=30 lkx --local -n 2 "$P" multi 2>&1); rc=$?
	is "$rc" 0 "PMI-$v: 2 parents, spawn_multiple of 1 + 2 children"
	is "$(lines "$out" 'child 0 of 3 (app0)')$(lines "$out" 'child [12] of 3 (app1)')" 12 \
		"PMI-$v: both commands in one job of 3, in order"
	like "$out" "parent: 3 children answered" "PMI-$v: the parents' barrier after the exchange"
done
out=$(LKX_TIMEOUT=30 lkx --local -n 2 "$P" exit 3 2>&1); rc=$?
is "$rc" 3 "a child exiting 3 fails the job with 3"
is "$(lines "$out" '^lamkit mpiexec:')" 1 "with one line"
like "$(printf '%s\n' "$out" | tail -n 1)" \
	"^lamkit mpiexec: spawned job 1 \(pmi_spawn\): rank 1 \(pid [0-9]+ on [^)]+\) exited with status 3$" \
	"naming the spawned job, the rank and the status"
out=$(LKX_TIMEOUT=30 lkx --local-agents 2:2 -n 2 "$P" refuse 3 2>&1); rc=$?
is "$rc" 0 "a spawn beyond the free slots is refused, the job goes on"
like "$out" "parent: spawn of 3: rc -1" "the rank gets rc -1"
like "$out" "lamkit mpiexec: rank 0 on [^ ]+ cannot spawn: 3 processes do not fit in the 2 free slots of the universe \(4 slots, 2 in use by this job\)" \
	"one line says how many slots are free"
out=$(LKX_TIMEOUT=30 lkx --local-agents 2:2 -n 1 "$P" 1 nowhere 2>&1); rc=$?
like "$out" "lamkit mpiexec: rank 0 on [^ ]+ cannot spawn: info host: nowhere is not a node of the universe" \
	"info host naming no node: one line"
out=$(LKX_TIMEOUT=30 lkx --local-agents 3:2 -n 2 "$P" 3 2>&1); rc=$?
is "$rc" 0 "--local-agents 3:2: 3 children fill the free slots of the other agents"
is "$(left)" "" "no parent or child left"

# Debian's MPICH 4.0 (ch4:ucx) has no dynamic processes: as under its own Hydra
if [ -x "$MPI_BIN/mpich/spawn" ] && command -v mpiexec.hydra >/dev/null; then
	# The program exits with its error code's low byte (exit_group(135879439): 15) and sends
	# no PMI abort. Hydra reports that status, or 1 when its proxy sees the PMI connection close
	# first ("BAD TERMINATION ... EXIT CODE: 1", 2 runs in 8 here): the status to match is one
	# of a Hydra run without that banner.
	for _ in 1 2 3 4 5; do
		hout=$(cd "$T" && timeout 30 mpiexec.hydra -n 1 "$MPI_BIN/mpich/spawn" 2>&1); hrc=$?
		printf '%s\n' "$hout" | grep -q "BAD TERMINATION" || break
	done
	out=$(LKX_TIMEOUT=30 lkx --local -n 1 "$MPI_BIN/mpich/spawn" 2>&1); rc=$?
	if printf '%s\n' "$hout" | grep -q "Error in spawn call"; then
		is "$rc" "$hrc" "MPICH's MPI_Comm_spawn fails with the status it has under Hydra ($hrc)"
		like "$out" "Error in spawn call" "with MPICH's own message"
	else
		like "$out" "parent: disconnected from 2 children" "MPICH spawns under lamkit"
	fi
fi

# four ssh namespace nodes, 2 slots each
if [ "$(id -u)" = 0 ] && { command -v sshd >/dev/null || [ -x /usr/sbin/sshd ]; }; then
	. "$LAMKIT_TOP/tests/lib/netns.sh"
	at_exit netns_down
	K=4
	if netns_up $K; then
		R="$LAMKIT_TMPDIR/lamkit-$(id -u)"
		U="$R/universe"
		at_exit '[ -f "$U" ] && timeout 30 "$LAMKIT" wipe >/dev/null 2>&1'
		{
			echo "boot = \"ssh\"; algorithm = \"linear\"; timeout = 15"
			echo "ssh = { options = { \"-F\", \"$NETNS_SSH_CONFIG\" }, verify = false }"
			echo "defaults = { program = \"$LAMKIT\" }"
			echo "for i = 1, $K do node(\"n\" .. i) { cpu = 2 } end"
		} >"$T/u.lua"
		(cd "$T" && timeout 60 "$LAMKIT" boot u.lua >/dev/null 2>&1)
		is $? 0 "boot $K ssh nodes"
		out=$(lkx -n 2 "$P" 4 2>&1); rc=$?
		is "$rc" 0 "2 parents on n1 spawn 4 children"
		is "$(lines "$out" 'child [01] of 4 (app0) on n2: parent said')$(lines "$out" 'child [23] of 4 (app0) on n3: parent said')" 22 \
			"the children fill the free slots of n2 and n3"
		is "$(lines "$out" 'parent: child [0-3] said hello')" 4 "and talk with their parent on n1"
		[ "$rc" = 0 ] || { diag "$out"; diag_agent_logs; }
		out=$(lkx -n 1 "$P" 1 n4 2>&1); rc=$?
		is "$rc" 0 "info host=n4"
		like "$out" "child 0 of 1 \(app0\) on n4: parent said 100" "puts the child on n4"
		out=$(lkx -n 2 "$P" exit 3 2>&1); rc=$?
		is "$rc" 3 "across nodes, a child exiting 3 fails the job"
		like "$(printf '%s\n' "$out" | tail -n 1)" \
			"^lamkit mpiexec: spawned job 1 \(pmi_spawn\): rank 1 \(pid [0-9]+ on n2\) exited with status 3$" \
			"with one line naming the child and its node"
		out=$(lkx -n 2 "$P" refuse 7 2>&1); rc=$?
		like "$out" "cannot spawn: 7 processes do not fit in the 6 free slots of the universe \(8 slots, 2 in use by this job\)" \
			"7 children do not fit in 6 free slots"
		# the name service is the universe's: later jobs on other nodes see the name
		like "$(lkx -n 1 "$P" publish lk-svc port-7 2>&1)" "publish lk-svc: rc 0" "a job on n1 publishes"
		like "$(lkx -n 1 -hosts n3 "$P" lookup lk-svc 2>&1)" "lookup lk-svc: rc 0 port port-7" \
			"a later job on n3 looks it up (PMI-2 wire)"
		like "$(LAMKIT_PMI_VERSION=1 lkx -n 1 -hosts n4 "$P" lookup lk-svc 2>&1)" \
			"lookup lk-svc: rc 0 port port-7" "and on n4 over PMI-1"
		like "$(lkx -n 1 -hosts n2 "$P" publish lk-svc other 2>&1)" "publish lk-svc: rc -1" \
			"publishing it again fails"
		like "$(lkx -n 1 -hosts n2 "$P" unpublish lk-svc 2>&1)" "unpublish lk-svc: rc 0" \
			"another job unpublishes it"
		unlike "$(lkx -n 1 -hosts n3 "$P" lookup lk-svc 2>&1)" "rc 0" "then it is gone"
		pids=$(awk '$1 == "node" { print $8 }' "$U" | tr '\n' ' ')
		(cd "$T" && timeout 30 "$LAMKIT" halt >/dev/null 2>&1)
		is $? 0 "halt"
		wait_gone 5 $pids; ok $? "every agent gone"
		is "$(left)" "" "no parent or child left on any node"
	else
		ok 1 "netns_up $K"
	fi
fi
done_testing
