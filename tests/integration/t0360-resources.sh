#!/bin/bash
# t0360: resources ranks register through PMI (lamkit's extension, both wire versions): a
# shared-memory segment, a /dev/shm file and a helper process in its own session. The agent
# removes and kills them when every rank is SIGKILLed and when ranks exit without releasing
# them; a two-phase release leaves a later unregistered file alone; after SIGKILL of the
# agent, mpiexec and the ranks, `lamkit wipe` removes them from the node's records; the
# segment of lamkit's own MPI goes when its ranks are killed.
# timeout: 150
. "$(dirname "$0")/../lib/common.sh"
P=$LAMKIT_TOP/out/testprogs
[ "$LAMKIT_VARIANT" = asan ] && [ -x "$LAMKIT_TOP/out/asan/testprogs/pmi_res" ] && P=$LAMKIT_TOP/out/asan/testprogs
pre=lkres-$$
mine=()
at_exit 'for p in "${mine[@]}"; do kill -9 "$p" 2>/dev/null; done; rm -f /dev/shm/'"$pre"'-*'
left() { ls /dev/shm 2>/dev/null | grep -c "^$pre-$1" ; }

# start_job TAG WIRE MODE N: run pmi_res in the background; sets agent, mpx, ranks, helpers
start_job() {
	local tag=$1 wire=$2 mode=$3 n=$4 i
	(cd "$T" && LAMKIT_PMI_VERSION=$wire exec timeout -k 5 90 "$LAMKIT" mpiexec -v -n "$n" \
		"$P/pmi_res" "$pre-$tag" "$mode" >"$T/$tag.out" 2>"$T/$tag.err") &
	mpx=$!
	mine+=($mpx)
	for i in $(seq 400); do
		[ "$(grep -c ' ready ' "$T/$tag.out" 2>/dev/null)" = "$n" ] && break
		grep -q FAIL "$T/$tag.out" 2>/dev/null && break
		sleep 0.05
	done
	agent=$(sed -n 's/^lamkit mpiexec: agent: pid \([0-9]*\) .*/\1/p' "$T/$tag.err")
	ranks=$(sed -n 's/^lamkit mpiexec: rank [0-9]*: pid \([0-9]*\) .*/\1/p' "$T/$tag.err" | tr '\n' ' ')
	helpers=$(sed -n 's/.* helper=\([0-9]*\)$/\1/p' "$T/$tag.out" | tr '\n' ' ')
	mine+=($agent $ranks $helpers)
}

for wire in 1 2; do
	start_job k$wire $wire hold 3
	is "$(grep -c ' ready ' "$T/k$wire.out")" 3 "[PMI-$wire] 3 ranks registered a segment, a file and a helper"
	is "$(left k$wire-seg) $(left k$wire-file) $(echo $helpers | wc -w)" "3 3 3" "[PMI-$wire] they exist"
	kill -KILL $ranks
	wait "$mpx"
	is "$?" 137 "[PMI-$wire] every rank SIGKILLed: the job ends with 128+9"
	wait_gone 10 $helpers; ok $? "[PMI-$wire] the agent killed the registered helpers"
	is "$(left k$wire-seg) $(left k$wire-file)" "0 0" "[PMI-$wire] and removed the segments and files"
done

out=$(LAMKIT_PMI_VERSION=2 lkx -n 2 "$P/pmi_res" "$pre-x" exit 2>&1); rc=$?
is "$rc" 0 "ranks that exit with their resources still registered: exit 0"
h=$(printf '%s\n' "$out" | sed -n 's/.* helper=\([0-9]*\)$/\1/p' | tr '\n' ' ')
mine+=($h)
wait_gone 5 $h; ok $? "their helpers were killed when they exited"
is "$(left x-)" 0 "their segment and file are gone"

start_job r 1 release 2
is "$(left r-keep)" 2 "two-phase release: the file made again afterwards exists"
kill -KILL $ranks
wait "$mpx"
wait_gone 10 $helpers
is "$(left r-seg) $(left r-file) $(left r-keep)" "0 0 2" "after SIGKILL only the released-then-remade files are left"
rm -f /dev/shm/$pre-r-keep-*

# the agent itself is SIGKILLed (its ranks die with it): only the records remain, and wipe
start_job w 2 hold 2
kill -KILL "$agent" "$mpx" 2>/dev/null
wait_gone 5 $agent $ranks; ok $? "agent and ranks SIGKILLed"
is "$(left w-seg) $(left w-file)" "2 2" "nobody removed the segments and files"
running=0
for h in $helpers; do pids_gone "$h" || running=$((running + 1)); done
is "$running" 2 "the helpers still run"
out=$("$LAMKIT" wipe 2>&1); rc=$?
is "$rc" 0 "lamkit wipe exits 0"
wait_gone 5 $helpers; ok $? "wipe killed the registered helpers (res-procs)"
is "$(left w-seg) $(left w-file)" "0 0" "wipe removed the registered segments and files (res-files)"
like "$out" "removed 4 registered files" "and says so"

# lamkit's own MPI: the node segment exists (recorded in the job dir) from its creation until
# every local rank attached; rank 1 here never reaches MPI_Init, so rank 0 waits with the
# segment made. Both SIGKILLed: the agent removes it.
cat >"$T/hold.c" <<'EOS'
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
int main(int argc, char **argv)
{
	if (atoi(getenv("PMI_RANK")) == 1) {
		printf("late: ready\n");
		fflush(stdout);
		for (;;)
			pause();
	}
	MPI_Init(&argc, &argv);
	printf("hold: rank 0 got through MPI_Init alone\n");
	return 1;
}
EOS
if "$LAMKIT" mpicc -o "$T/hold" "$T/hold.c"; then
	(cd "$T" && exec timeout -k 5 60 "$LAMKIT" mpiexec -v -n 2 "$T/hold" >"$T/hold.out" 2>"$T/hold.err") &
	mpx=$!
	mine+=($mpx)
	segs=
	for i in $(seq 400); do
		segs=$(cat "$LAMKIT_TMPDIR"/lamkit-*/*/job-*/shm-* 2>/dev/null | tr '\n' ' ')
		[ -n "$segs" ] && grep -q ready "$T/hold.out" && break
		sleep 0.05
	done
	ranks=$(sed -n 's/^lamkit mpiexec: rank [0-9]*: pid \([0-9]*\) .*/\1/p' "$T/hold.err" | tr '\n' ' ')
	mine+=($ranks)
	ok "$([ -n "$segs" ] && for s in $segs; do [ -e "/dev/shm$s" ] || exit 1; done; echo $?)" "rank 0 made the node segment and recorded it ($segs)"
	kill -KILL $ranks
	wait "$mpx"
	gone=0
	for s in $segs; do [ -e "/dev/shm$s" ] || gone=$((gone + 1)); done
	is "$gone" "$(echo $segs | wc -w)" "ranks SIGKILLed: the agent removed the MPI segment"
else
	ok 1 "lamkit mpicc builds the MPI holder"
fi
done_testing
