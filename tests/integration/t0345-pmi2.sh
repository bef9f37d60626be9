#!/bin/bash
# t0345: PMI-2 on the agent's PMI_FD as real clients see it: lamkit's PMI2_* API and its PMI-1
# API over the PMI-2 wire, a program linked against Slurm's own PMI-2 client (Debian libpmi2),
# lamkit MPI programs over PMI-2 and PMI-1 (also mixed in one job), under Hydra's PMI-2, as a
# singleton, and hostile PMI-2 clients ending only their job with a message naming the rank.
# timeout: 180
. "$(dirname "$0")/../lib/common.sh"
P=$LAMKIT_TOP/out/testprogs
[ "$LAMKIT_VARIANT" = asan ] && [ -x "$LAMKIT_TOP/out/asan/testprogs/pmi2_check" ] && P=$LAMKIT_TOP/out/asan/testprogs
M=$LAMKIT_TOP/out/mpi-lamkit

out=$(lkx -n 4 "$P/pmi2_check"); rc=$?
is "$rc" 0 "PMI2_* API under lamkit: job attributes, node attributes, put/fence/get, names"
is "$(printf '%s\n' "$out" | grep -c '^pmi2_check: rank [0-3] ok (4 ranks)')" 4 "all 4 ranks checked every rank's value (with ';', '=' and spaces)"
is "$(printf '%s\n' "$out" | grep -c "nodeattr 'from rank 0; 4 local'")" 4 "node attribute put by rank 0 reached the 3 ranks waiting for it (PMI-2 only)"
like "$out" "mapping \(vector,\(0,1,4\)\), universe 4" "PMI_process_mapping and universeSize as job attributes"

out=$(lkx -n 3 "$P/pmi_check" --extra --no-walk); rc=$?
is "$rc" 0 "the PMI-1 API over the PMI-2 wire (the default under lamkit): put/get, clique, names"
like "$out" "clique \[0,1,2\]" "clique from info-getjobattr PMI_process_mapping"
out=$(LAMKIT_PMI_VERSION=1 lkx -n 2 "$P/pmi2_check"); rc=$?
like "$out" "FAIL (put|get)nodeattr" "forced PMI-1: node attributes are refused (proof the default above spoke PMI-2)"

if [ -f /usr/include/slurm/pmi2.h ] && cc -O -o "$T/pmi2_slurm" "$LAMKIT_TOP/tests/pmi/pmi2_check.c" -I/usr/include/slurm -lpmi2 2>"$T/cc.err"; then
	out=$(lkx -n 4 "$T/pmi2_slurm"); rc=$?
	is "$rc" 0 "a program linked against Slurm's libpmi2 runs under lamkit mpiexec"
	is "$(printf '%s\n' "$out" | grep -c '^pmi2_check: rank [0-3] ok (4 ranks)')" 4 "Slurm's client: put/fence/get, node attributes and names on all 4 ranks"
else
	ok 1 "Slurm's libpmi2 (libpmi2-0-dev, installed by packaging/setup-deps) builds: $(cat "$T/cc.err" 2>/dev/null)"
fi

like "$(lkx -n 4 "$M/ring" 3)" "ring: OK laps=3 size=4" "lamkit MPI ring over PMI-2"
like "$(lkx -n 4 "$M/collectives")" "collectives: OK size=4" "lamkit MPI collectives over PMI-2"
like "$(LAMKIT_PMI_VERSION=1 lkx -n 4 "$M/ring" 2)" "ring: OK laps=2 size=4" "and over PMI-1 (forced)"
out=$(lkx -n 2 env LAMKIT_PMI_VERSION=1 "$M/ring" 2 : -n 2 "$M/ring" 2 2>&1); rc=$?
like "$out" "ring: OK laps=2 size=4" "one job, two ranks on PMI-1 and two on PMI-2: one KVS, one fence"
out=$(lkx -n 4 "$M/placement"); rc=$?
is "$(printf '%s\n' "$out" | grep -c 'node \[0,1,2,3\] local')" 4 "MPI_Comm_split_type from the PMI-2 mapping"

if command -v mpiexec.hydra >/dev/null; then
	out=$(cd "$T" && LAMKIT_PMI_VERSION=2 timeout 60 mpiexec.hydra -n 3 "$P/pmi2_check" --plain --no-names 2>&1); rc=$?
	is "$rc" 0 "PMI2_* API under Hydra's PMI-2 (LAMKIT_PMI_VERSION=2; Hydra mangles ';' and has no name server here)"
	out=$(cd "$T" && LAMKIT_PMI_VERSION=2 timeout 60 mpiexec.hydra -n 3 "$M/ring" 2 2>&1)
	like "$out" "ring: OK laps=2 size=3" "lamkit MPI under Hydra's PMI-2"
	out=$(cd "$T" && timeout 60 mpiexec.hydra -n 3 "$M/ring" 2 2>&1)
	like "$out" "ring: OK laps=2 size=3" "lamkit MPI under Hydra's PMI-1 (its default)"
fi
out=$(cd "$T" && env -u PMI_FD -u PMI_PORT -u PMI_JOBID timeout 20 "$P/pmi2_check"); rc=$?
is "$rc" 0 "PMI2_* API as a singleton"
like "$out" "rank 0 of 1, .*mapping \(vector,\(0,1,1\)\)" "singleton: rank 0 of 1 on one node"
like "$(cd "$T" && env -u PMI_FD -u PMI_PORT timeout 20 "$M/ring" 2)" "ring: OK laps=2 size=1" "lamkit MPI singleton"

# hostile PMI-2 clients: switch with a PMI-1 init line, then break the framing or the rules.
# $T/p2 RANK BYTES...: on rank RANK only, switch to PMI-2 and send each BYTES as a message
# ("raw:X" sends X as is); every rank then sleeps.
cat >"$T/p2" <<'EOS'
#!/bin/bash
[ "$PMI_RANK" = "$1" ] || exec sleep 20
shift
echo 'cmd=init pmi_version=2 pmi_subversion=0' >&3
read -r l <&3
for m in "$@"; do
	case $m in raw:*) printf '%s' "${m#raw:}" >&3 ;; *) printf '%-6d%s' "${#m}" "$m" >&3 ;; esac
done
sleep 20
EOS
chmod +x "$T/p2"
err=$(lkx -n 2 "$T/p2" 1 'raw:12x   cmd=x;' 2>&1); rc=$?
like "$err" "rank 1 on .* broke the PMI protocol: .*PMI-2 length header" "a bad PMI-2 length header ends the job, naming rank 1"
is "$rc" 1 "exit status 1"
err=$(lkx -n 2 "$T/p2" 0 'cmd=kvs-get;key=a;' 2>&1)
like "$err" "rank 0 on .* broke the PMI protocol: .*kvs-get before fullinit" "a request before fullinit ends the job"
err=$(lkx -n 1 "$T/p2" 0 'raw:999999' 2>&1)
like "$err" "broke the PMI protocol: .*length header" "an oversized PMI-2 length ends the job"
err=$(lkx -n 2 "$T/p2" 1 'cmd=fullinit;threaded=FALSE;' 'key=v;' 2>&1)
like "$err" "rank 1 on .* broke the PMI protocol: .*malformed PMI-2 message \(no_cmd\)" "a message without cmd ends the job"
t0=$(date +%s%N)
err=$(lkx -n 3 "$T/p2" 2 'cmd=fullinit;threaded=FALSE;' 'cmd=abort;isworld=TRUE;msg=bye;exitcode=9;' 2>&1); rc=$?
ms=$((($(date +%s%N) - t0) / 1000000))
is "$rc" 9 "PMI-2 abort with lamkit's exitcode= ends the job with that code"
like "$err" "bye" "and shows the message"
ok "$([ "$ms" -lt 15000 ]; echo $?)" "without waiting for the sleeping ranks (${ms} ms)"
done_testing
