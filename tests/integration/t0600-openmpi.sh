#!/bin/bash
# t0600: unmodified Open MPI programs under lamkit mpiexec, recognised by their ELF
# DT_NEEDED and started on their PMIx component (the agents' PMIx server; t0605 has more of
# it); failures as for MPICH; /dev/shm and the session directory clean after every job; MPICH
# jobs never see Open MPI's variables. --mpi openmpi-flux keeps the PMI-1 (flux) path, with
# libpmi.so out of the static binary; there MPI_Comm_spawn fails with one line saying why.
# timeout: 400
. "$(dirname "$0")/../lib/common.sh"
need_openmpi
B=$MPI_BIN/openmpi
host=$(hostname)
# Open MPI's shared-memory files must live in the job's directory (removed with the job), not in
# /dev/shm where a crashed job leaves them. Other Open MPI users on the machine may create
# vader files in /dev/shm meanwhile, so this looks at what our ranks map while they run.
shm_clean() { :; }
sess_clean() { is "$(ls "$LAMKIT_TMPDIR/lamkit-$(id -u)" 2>/dev/null)" "" "$1: no session directory left"; }

for n in 1 2 4; do
	out=$(lkx -n $n "$B/hello" | sort)
	want=$(for ((r = 0; r < n; r++)); do echo "hello from rank $r of $n on $host"; done | sort)
	is "$out" "$want" "Open MPI hello -n $n, no option needed"
done
shm_clean hello
like "$(lkx -n 4 "$B/ring" 3)" "^ring: OK laps=3 size=4" "Open MPI ring -n 4"
like "$(lkx -n 4 "$B/collectives" 256)" "^collectives: OK size=4" "Open MPI collectives -n 4"
like "$(LKX_TIMEOUT=120 lkx -n 2 "$B/large")" "large: OK" "Open MPI large messages 0 B .. 8 MiB"
shm_clean "ring/collectives/large"
sess_clean "ring/collectives/large"

out=$(LKT_E1='a b' lkx -n 2 -wdir "$T" "$B/envargs" 'arg one' --env LKT_E1 FLUX_JOB_ID PMIX_RANK)
like "$out" "envargs: 1 argv\[1\]=\[arg one\]" "arguments reach Open MPI ranks"
like "$out" "envargs: 0 env LKT_E1=\[a b\]" "environment reaches Open MPI ranks"
like "$out" "envargs: 1 cwd=\[$T\]" "working directory reaches Open MPI ranks"
PMIX_RANK=5 PMIX_NAMESPACE=leak lkx -n 2 "$B/hello" >/dev/null; ok $? "leaked PMIX_* variables are removed (else PMIx wins and MPI_Init fails)"
out=$(lkx -n 1 "$MPI_BIN/mpich/envargs" --env FLUX_JOB_ID OMPI_MCA_pmix FLUX_PMI_LIBRARY_PATH)
like "$out" "env FLUX_JOB_ID unset" "an MPICH job does not get FLUX_JOB_ID"
like "$out" "env OMPI_MCA_pmix unset" "nor OMPI_MCA_*"
out=$(lkx --mpi openmpi -n 1 sh -c 'echo ${PMIX_NAMESPACE:+pmix} ${FLUX_PMI_LIBRARY_PATH:+flux}')
is "$out" "pmix" "--mpi openmpi forces the Open MPI environment, on PMIx"
out=$(lkx --mpi openmpi-flux -n 1 sh -c 'echo $OMPI_MCA_pmix ${PMIX_NAMESPACE:+pmix}')
is "$out" "flux" "--mpi openmpi-flux: the flux component and no PMIx"
like "$(lkx --mpi openmpi-flux -n 4 "$B/ring" 2)" "^ring: OK laps=2 size=4" "Open MPI ring -n 4 on the flux path"
out=$(lkx --mpi none -n 1 "$B/envargs" --env FLUX_JOB_ID 2>/dev/null)
like "$out" "env FLUX_JOB_ID unset" "--mpi none gives none (the program then runs as a singleton)"

(cd "$T" && exec timeout 60 "$LAMKIT" mpiexec -v -n 3 "$B/segv" 1 0 2500 >"$T/seg.out" 2>"$T/seg.err") &
bg=$!
rp=
for i in $(seq 100); do
	rp=$(sed -n 's/^lamkit mpiexec: rank 0: pid \([0-9]*\) .*/\1/p' "$T/seg.err")
	[ -n "$rp" ] && grep -q 'blocking' "$T/seg.out" 2>/dev/null && break
	sleep 0.05
done
maps=$(grep vader_segment "/proc/$rp/maps" 2>/dev/null | awk '{print $6}' | sort -u)
like "$maps" "^$LAMKIT_TMPDIR/" "a running Open MPI rank maps its vader segments from the job directory"
unlike "$maps" "^/dev/shm/vader" "and none from the shared /dev/shm namespace"
wait $bg
sess_clean "after the crash"

# like mpirun, an Open MPI job of <= 2 ranks per node is bound to cores; bigger ones are not
out=$(lkx --mpi openmpi -n 2 sh -c 'awk "/^Cpus_allowed_list/ {print \$2}" /proc/self/status' | sort -u | wc -l)
is "$out" "$([ "$(nproc)" -ge 2 ] && echo 2 || echo 1)" "2 Open MPI ranks are bound to different cores (as mpirun does)"
is "$(lkx --mpi openmpi -n 3 sh -c 'awk "/^Cpus_allowed_list/ {print \$2}" /proc/self/status' | sort -u)" "$(awk '/^Cpus_allowed_list/ {print $2}' /proc/self/status)" "3 Open MPI ranks are not bound"
is "$(lkx --mpi openmpi --bind-to none -n 2 sh -c 'awk "/^Cpus_allowed_list/ {print \$2}" /proc/self/status' | sort -u)" "$(awk '/^Cpus_allowed_list/ {print $2}' /proc/self/status)" "--bind-to none turns it off"

# failures, exactly as for MPICH programs
t0=$(date +%s%N)
err=$(lkx -n 4 "$B/abort" 1 9 2>&1 >/dev/null); rc=$?
ms=$((($(date +%s%N) - t0) / 1000000))
is "$rc" 9 "Open MPI MPI_Abort(9): exit 9"
like "$err" "rank 1 \(pid [0-9]+ on $host\) called MPI_Abort with code 9" "message names rank, pid, host"
ok "$([ $ms -lt 5000 ]; echo $?)" "job ended quickly ($ms ms incl. startup)"
err=$(lkx -n 4 "$B/segv" 2 2>&1 >/dev/null); rc=$?
is "$rc" 139 "Open MPI rank crash: exit 139"
like "$err" "rank 2 \(pid [0-9]+ on $host\) killed by signal 11" "crash message"
err=$(lkx -n 3 "$B/exitcode" 1 4 after 2>&1 >/dev/null); rc=$?
is "$rc" 4 "Open MPI exit(4) after finalize: exit 4"
shm_clean failures
sess_clean failures

# Open MPI 4.1 spawns only through PMIx; its PMI-1 (flux) component has no spawn: the call
# fails at once, and the abort line says why
out=$(lkx --mpi openmpi-flux -n 1 "$B/spawn" 2>&1); rc=$?
is "$rc" 50 "Open MPI MPI_Comm_spawn under lamkit: MPI_ERR_SPAWN, fatal (exit 50)"
is "$(printf '%s\n' "$out" | grep -c '^lamkit mpiexec:')" 1 "one line from mpiexec"
like "$out" "^lamkit mpiexec: rank 0 \(pid [0-9]+ on [^)]+\) called MPI_Abort with code 50: .*Open MPI 4\.1 spawns only through a PMIx server; its PMI-1 \(flux\) component" \
	"saying what Open MPI would need"
out=$(lkx --mpi openmpi-flux -n 2 "$B/abort" 2>&1)
unlike "$out" "PMIx" "a program that does not import MPI_Comm_spawn gets no such hint"
shm_clean spawn
sess_clean spawn

head -c 20000000 /dev/urandom >"$T/in.bin"
want=$("$MPI_BIN/mpich/stdin" <"$T/in.bin" | sed 's/.*bytes=//')
is "$(lkx -n 2 "$B/stdin" <"$T/in.bin" | sed 's/.*bytes=//')" "$want" "20 MB of stdin reach an Open MPI rank 0 intact"

out=$(LKX_TIMEOUT=300 lkx -n 32 "$B/hello" | grep -c 'of 32 on'); rc=$?
is "$out" 32 "Open MPI hello with 32 ranks oversubscribed"
like "$(LKX_TIMEOUT=300 lkx -n 32 "$B/ring" 1)" "ring: OK .*size=32" "Open MPI ring of 32 (told to yield when idle)"
shm_clean "32 ranks"
sess_clean "32 ranks"
done_testing
