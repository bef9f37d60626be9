#!/bin/bash
# t0360: resources ranks register through PMI (lamkit's extension, both wire versions): a
# shared-memory segment, a /dev/shm file, SysV shm and semaphore ids and a helper process in
# its own session. The agent
# removes and kills them when every rank is SIGKILLed and when ranks exit without releasing
# them; a two-phase release leaves a later unregistered file alone; after SIGKILL of the
# agent, mpiexec and the ranks, `lamkit wipe` removes them from the node's records; the
# node segment lamkit's MPI uses is made by the agent before rank 0 starts and goes when the
# ranks are killed.
# timeout: 150
. "$(dirname "$0")/../lib/common.sh"
P=$LAMKIT_TOP/out/testprogs
[ "$LAMKIT_VARIANT" = asan ] && [ -x "$LAMKIT_TOP/out/asan/testprogs/pmi_res" ] && P=$LAMKIT_TOP/out/asan/testprogs
pre=lkres-$$
mine=() shmids=() semids=()
at_exit 'for p in "${mine[@]}"; do kill -9 "$p" 2>/dev/null; done; rm -f /dev/shm/'"$pre"'-*
	for i in "${shmids[@]}"; do ipcrm -m "$i" 2>/dev/null; done
	for i in "${semids[@]}"; do ipcrm -s "$i" 2>/dev/null; done'
left() { ls /dev/shm 2>/dev/null | grep -c "^$pre-$1" ; }
# sysv_left SHMIDS SEMIDS: how many of these SysV ids exist
sysv_left() {
	local n=0 i
	for i in $1; do awk -v i="$i" '$2 == i { f = 1 } END { exit !f }' /proc/sysvipc/shm && n=$((n + 1)); done
	for i in $2; do awk -v i="$i" '$2 == i { f = 1 } END { exit !f }' /proc/sysvipc/sem && n=$((n + 1)); done
	echo $n
}

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
	shm=$(sed -n 's/.* sysv-shm=\([0-9]*\) .*/\1/p' "$T/$tag.out" | tr '\n' ' ')
	sem=$(sed -n 's/.* sysv-sem=\([0-9]*\) .*/\1/p' "$T/$tag.out" | tr '\n' ' ')
	mine+=($agent $ranks $helpers) shmids+=($shm) semids+=($sem)
}

for wire in 1 2; do
	start_job k$wire $wire hold 3
	is "$(grep -c ' ready ' "$T/k$wire.out")" 3 "[PMI-$wire] 3 ranks registered a segment, a file and a helper"
	is "$(left k$wire-seg) $(left k$wire-file) $(echo $helpers | wc -w) $(sysv_left "$shm" "$sem")" "3 3 3 6" "[PMI-$wire] they exist"
	kill -KILL $ranks
	wait "$mpx"
	is "$?" 137 "[PMI-$wire] every rank SIGKILLed: the job ends with 128+9"
	wait_gone 10 $helpers; ok $? "[PMI-$wire] the agent killed the registered helpers"
	is "$(left k$wire-seg) $(left k$wire-file) $(sysv_left "$shm" "$sem")" "0 0 0" "[PMI-$wire] and removed the segments, files and SysV ids"
done

out=$(LAMKIT_PMI_VERSION=2 lkx -n 2 "$P/pmi_res" "$pre-x" exit 2>&1); rc=$?
is "$rc" 0 "ranks that exit with their resources still registered: exit 0"
h=$(printf '%s\n' "$out" | sed -n 's/.* helper=\([0-9]*\)$/\1/p' | tr '\n' ' ')
shm=$(printf '%s\n' "$out" | sed -n 's/.* sysv-shm=\([0-9]*\) .*/\1/p' | tr '\n' ' ')
sem=$(printf '%s\n' "$out" | sed -n 's/.* sysv-sem=\([0-9]*\) .*/\1/p' | tr '\n' ' ')
mine+=($h) shmids+=($shm) semids+=($sem)
wait_gone 5 $h; ok $? "their helpers were killed when they exited"
is "$(left x-) $(echo $shm $sem | wc -w) $(sysv_left "$shm" "$sem")" "0 4 0" "their segment, file and SysV ids are gone"

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
is "$(left w-seg) $(left w-file) $(sysv_left "$shm" "$sem")" "2 2 4" "nobody removed the segments, files and SysV ids"
running=0
for h in $helpers; do pids_gone "$h" || running=$((running + 1)); done
is "$running" 2 "the helpers still run"
out=$("$LAMKIT" wipe 2>&1); rc=$?
is "$rc" 0 "lamkit wipe exits 0"
wait_gone 5 $helpers; ok $? "wipe killed the registered helpers (res-procs)"
is "$(left w-seg) $(left w-file) $(sysv_left "$shm" "$sem")" "0 0 0" "wipe removed the registered segments, files and SysV ids (res-files)"
like "$out" "removed 9 registered files" "and says so (4 files, 4 SysV ids, the node segment)"

# lamkit's own MPI: the agent makes the node segment before the ranks start (rank 0 sees it
# before MPI_Init) and records it in the job dir; rank 1 here never reaches MPI_Init, so rank 0
# waits in it. Both SIGKILLed: the agent removes it. A job that ends normally leaves none.
cat >"$T/hold.c" <<'EOS'
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
int main(int argc, char **argv)
{
	const char *seg = getenv("LAMKIT_SHM_SEGMENT");
	char path[300];
	snprintf(path, sizeof(path), "/dev/shm%s", seg ? seg : "/none");
	if (atoi(getenv("PMI_RANK")) != 0) {
		if (argc > 1)
			return MPI_Init(&argc, &argv) || MPI_Finalize();
		printf("late: ready\n");
		fflush(stdout);
		for (;;)
			pause();
	}
	printf("hold: segment %s %s before MPI_Init\n", seg ? seg : "(none)",
	       access(path, F_OK) == 0 ? "exists" : "missing");
	fflush(stdout);
	MPI_Init(&argc, &argv);
	if (argc > 1)
		return MPI_Finalize();
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
		[ -n "$segs" ] && grep -q ready "$T/hold.out" && grep -q "before MPI_Init" "$T/hold.out" && break
		sleep 0.05
	done
	ranks=$(sed -n 's/^lamkit mpiexec: rank [0-9]*: pid \([0-9]*\) .*/\1/p' "$T/hold.err" | tr '\n' ' ')
	mine+=($ranks)
	seg=$(sed -n 's/^hold: segment \(.*\) exists before MPI_Init$/\1/p' "$T/hold.out")
	ok "$([ -n "$seg" ] && [ "$segs" = "$seg " ]; echo $?)" "the agent made the node segment before rank 0 started and recorded it ($seg; records: $segs)"
	kill -KILL $ranks
	wait "$mpx"
	ok "$([ -n "$seg" ] && [ ! -e "/dev/shm$seg" ]; echo $?)" "ranks SIGKILLed: the agent removed the node segment"
	out=$(lkx -n 3 "$T/hold" done 2>&1); rc=$?
	seg=$(printf '%s\n' "$out" | sed -n 's/^hold: segment \(.*\) exists before MPI_Init$/\1/p')
	is "$rc" 0 "a job of 3 ranks through MPI_Init and MPI_Finalize exits 0"
	[ -n "$seg" ] && [ ! -e "/dev/shm$seg" ]; ok $? "its node segment ($seg) existed before rank 0 started and is gone"
else
	ok 1 "lamkit mpicc builds the MPI holder"
fi
done_testing
