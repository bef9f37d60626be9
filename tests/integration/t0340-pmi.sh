#!/bin/bash
# t0340: the PMI-1 server as real clients see it (PMI-2: t0345): our libpmi (PMI_FD and PMI_PORT), MPICH over
# PMI_PORT, an MPICH singleton upgraded through `mpiexec -pmi_args`, libpmi under Hydra and as
# a singleton, and hostile clients (unknown versions, garbage, oversize lines) ending only their job.
# timeout: 180
. "$(dirname "$0")/../lib/common.sh"
need_mpich
B=$MPI_BIN/mpich
P=$LAMKIT_TOP/out/testprogs/pmi_check
[ "$LAMKIT_VARIANT" = asan ] && P=$LAMKIT_TOP/out/asan/testprogs/pmi_check
[ -x "$P" ] || P=$LAMKIT_TOP/out/testprogs/pmi_check

out=$(LAMKIT_PMI_VERSION=1 lkx -n 4 "$P" --extra); rc=$?
is "$rc" 0 "libpmi under lamkit (PMI_FD, PMI-1 forced): put/commit/barrier/get, KVS walk, name service"
is "$(printf '%s\n' "$out" | grep -c 'ok')" 4 "every rank checked every other rank's values"
like "$out" "clique \[0,1,2,3\]" "the clique is the whole host"
out=$(lkx --pmi-port -n 4 "$P" --extra); rc=$?
is "$rc" 0 "libpmi over PMI_PORT + PMI_ID (initack)"
is "$(printf '%s\n' "$out" | grep -c 'ok')" 4 "all 4 ranks ok over TCP"
like "$(lkx --pmi-port -n 4 "$B/ring" 2)" "ring: OK" "an MPICH program over PMI_PORT"
out=$(LKX_TIMEOUT=30 lkx -n 2 "$B/ring" 1 : -n 2 "$B/ring" 1 2>&1); rc=$?
is "$rc" 0 "MPMD: two MPICH apps in one job"
like "$out" "ring: OK laps=1 size=4" "share one KVS and one MPI_COMM_WORLD of 4 (the token passes through both)"

# the PMI paper's "Typical Usage": P<rank>-hostname/-port, commit, barrier, get at first send
U=${P%/*}/pmi_usage
for wire in 1 2; do
	out=$(LAMKIT_PMI_VERSION=$wire lkx -n 4 "$U" 2>&1); rc=$?
	is "$rc $(printf '%s\n' "$out" | grep -c "^usage rank=[0-3] got 'hello from [0-3] to [0-3]' OK$")" "0 4" \
		"the paper's typical usage, PMI-$wire: every rank reached the next through the KVS"
done
out=$(lkx --local-agents 2 -n 4 "$U" 2>&1); rc=$?
is "$rc $(printf '%s\n' "$out" | grep -c ' OK$')" "0 4" "the typical usage over two agents (the tree fence)"
out=$(cd "$T" && env -u PMI_FD -u PMI_PORT timeout 20 "$U" 2>&1); rc=$?
like "$rc $out" "^0 usage rank=0 got 'hello from 0 to 0' OK" "the typical usage as a singleton"
if command -v mpiexec.hydra >/dev/null; then
	out=$(cd "$T" && timeout 60 mpiexec.hydra -n 3 "$P"); rc=$?
	is "$rc" 0 "libpmi works under MPICH's mpiexec.hydra too"
	out=$(cd "$T" && timeout 60 mpiexec.hydra -n 3 "$U" 2>&1); rc=$?
	is "$rc $(printf '%s\n' "$out" | grep -c ' OK$')" "0 3" "the typical usage under Hydra"
fi
out=$(cd "$T" && env -u PMI_FD -u PMI_PORT timeout 20 "$P"); rc=$?
is "$rc" 0 "libpmi works as a singleton"
like "$out" "rank 0 of 1" "singleton is rank 0 of 1"

# an MPICH singleton that needs a process manager runs `mpiexec -pmi_args ...` from PATH
mkdir -p "$T/bin" && ln -s "$LAMKIT" "$T/bin/mpiexec"
out=$(cd "$T" && PATH="$T/bin:$PATH" timeout 30 "$B/universe" 2>&1); rc=$?
is "$rc" 0 "an MPICH singleton upgraded through lamkit mpiexec -pmi_args exits 0"
like "$out" "universe: rank 0 of 1, universe size [1-9]" "and learns the universe size from our server"
pids_left=$(pgrep -f "$T/bin/mpiexec -pmi_args" || true)
is "$pids_left" "" "the upgrade's mpiexec ended with the singleton"

# hostile clients: each ends its job with a message naming the rank; the agent never hangs
err=$(lkx -n 2 bash -c 'if [ $PMI_RANK = 1 ]; then echo "cmd=init pmi_version=3 pmi_subversion=0" >&3; read -r l <&3; echo "$l"; fi; sleep 20' 2>&1); rc=$?
like "$err" "rank 1 on .* broke the PMI protocol: .*PMI version 3" "a PMI-3 init ends the job with a message naming the rank (the rc=-1 reply is unit-tested)"
is "$rc" 1 "exit status 1"
err=$(lkx -n 2 bash -c '[ $PMI_RANK = 0 ] && printf "\x01\x02garbage\x00\n" >&3; sleep 20' 2>&1); rc=$?
like "$err" "rank 0 on .* broke the PMI protocol" "binary garbage ends the job, naming rank 0"
err=$(lkx -n 1 bash -c 'head -c 5000 /dev/zero | tr "\0" a >&3; sleep 20' 2>&1); rc=$?
like "$err" "broke the PMI protocol" "an oversize line ends the job"
t0=$(date +%s%N)
err=$(lkx -n 3 bash -c '[ $PMI_RANK = 2 ] && { echo "cmd=abort exitcode=42" >&3; sleep 20; }; exec 3>&-; sleep 20' 2>&1); rc=$?
ms=$((($(date +%s%N) - t0) / 1000000))
is "$rc" 42 "cmd=abort exitcode=42 ends the job with 42"
ok "$([ $ms -lt 2000 ]; echo $?)" "within a second or so (${ms} ms)"
is "$(ls "$LAMKIT_TMPDIR/lamkit-$(id -u)" 2>/dev/null)" "" "no session directory left"
done_testing
