#!/bin/bash
# t0430: a universe inside a real 4-node Slurm allocation (one slurmd per namespace node): the
# slurm boot module is chosen by itself, one srun starts an agent per node (oneshot), MPICH
# programs run across the nodes with the slots Slurm gave, a second job runs in the same
# universe, lamkit-MPI ranks spawn children onto the other nodes' free slots (tests/mpi/lk_dyn:
# both ways, and a crashing child fails the job with one line), Open MPI runs on the agents'
# PMIx server (and spawns 4 children onto the other nodes), lamkit's MPI runs under srun
# --mpi=pmix through `lamkit pmix-proxy`, halt ends the agents (and so their srun step) and
# every rank; the allocation ends clean.
# timeout: 240
. "$(dirname "$0")/../lib/common.sh"
[ "$(id -u)" = 0 ] || skip_all "needs root (network namespaces, daemons)"
need_mpich
DYN=$LAMKIT_TOP/out/mpi-lamkit/lk_dyn
[ "$LAMKIT_VARIANT" = asan ] && DYN=$LAMKIT_TOP/out/asan/mpi-lamkit/lk_dyn
LKRING=$(dirname "$DYN")/ring
. "$LAMKIT_TOP/tests/lib/slurm.sh"
slurm_deps >/dev/null 2>&1 || skip_all "Slurm packages not installable"
at_exit slurm_down
slurm_up 4 || { ok 1 "slurm_up 4"; slurm_log | sed 's/^/# /'; done_testing; }
ok 0 "slurm_up 4"

# Everything below runs inside `salloc -N4 --ntasks-per-node=2`: the allocation's environment is what boot sees.
cat >"$T/inside.sh" <<EOS
#!/bin/bash
cd "$T"
echo "boot:"; timeout 60 "$LAMKIT" boot -v 2>&1; echo "rc=\$?"
echo "nodes:"; timeout 20 "$LAMKIT" nodes 2>&1; echo "rc=\$?"
echo "hello:"; timeout 60 "$LAMKIT" mpiexec "$MPI_BIN/mpich/hello" 2>&1; echo "rc=\$?"
echo "ring:"; timeout 60 "$LAMKIT" mpiexec -n 8 "$MPI_BIN/mpich/ring" 2>&1; echo "rc=\$?"
echo "dirs:"; ls -d "$LAMKIT_TMPDIR/lamkit-\$(id -u)"/u*-n0-p* | wc -l
for d in "$LAMKIT_TMPDIR/lamkit-\$(id -u)"/u*-n0-p*; do ls /dev/shm | grep -c -- "^lkmpi-a.*-\${d##*-p}\$"; done | awk '{ s += \$1 } END { print s + 0 }'; echo "rc=0"
echo "ppn:"; timeout 60 "$LAMKIT" mpiexec -ppn 1 -n 4 "$MPI_BIN/mpich/hello" 2>&1; echo "rc=\$?"
if [ -x "$MPI_BIN/openmpi/ring" ]; then
	echo "ompi:"; OMPI_MCA_pmix_base_verbose=10 timeout 60 "$LAMKIT" mpiexec -n 8 "$MPI_BIN/openmpi/ring" 2>&1 | grep -E '^ring:|Selected component \[(ext3x|flux)\]|^lamkit'; echo "rc=\${PIPESTATUS[0]}"
	echo "ompispawn:"; timeout 60 "$LAMKIT" mpiexec -v -n 2 "$MPI_BIN/openmpi/spawn" spawn 4 2>&1; echo "rc=\$?"
fi
if [ -x "$DYN" ]; then
	echo "spawn:"; timeout 60 "$LAMKIT" mpiexec -v -n 2 "$DYN" spawn 4 2>&1; echo "rc=\$?"
	echo "crash:"; timeout 60 "$LAMKIT" mpiexec -n 2 "$DYN" crash 3 2>&1; echo "rc=\$?"
fi
# lamkit's own MPI under Slurm's PMIx launcher: libpmi runs the lamkit binary as its PMIx client
echo "srunpmix:"; LAMKIT_PMIX_PROXY="$LAMKIT" timeout 60 srun --mpi=pmix -n 8 "$LKRING" 2 2>&1; echo "rc=\$?"
echo "steps:"; squeue -h -s -j "\$SLURM_JOB_ID" -o '%j' 2>&1
# for a failure's diagnosis: what the universe and its logs (the agents' srun step writes into
# the origin's launch-group.log) said before halt removes them
echo "beforehalt:"; timeout 20 "$LAMKIT" nodes 2>&1
mkdir -p "$T/diag"; find "$LAMKIT_TMPDIR" \( -name log -o -name 'launch-*.log' \) -type f 2>/dev/null |
	while read -r f; do cp "\$f" "$T/diag/\$(printf '%s' "\$f" | tr / _)"; done; echo "rc=0"
echo "halt:"; timeout 30 "$LAMKIT" halt 2>&1; echo "rc=\$?"
sleep 1
echo "after:"; squeue -h -s -j "\$SLURM_JOB_ID" -o '%j' 2>&1 | grep -c lamkit-agent
echo "ranks left:"; pgrep -f "^$DYN" | wc -l
exit 0
EOS
chmod +x "$T/inside.sh"
out=$(timeout -k 5 150 salloc -N4 --ntasks-per-node=2 -p "$SLURM_PARTITION" "$T/inside.sh" 2>&1); rc=$?
is "$rc" 0 "salloc -N4 ran the script"
sect() { printf '%s\n' "$out" | sed -n "/^$1:\$/,/^rc=/p"; }
like "$(sect boot)" "4 of 4 node\(s\) up in [0-9.]+ s \(slurm, oneshot\)" "boot inside the allocation: slurm, oneshot"
like "$(sect boot)" "rc=0" "boot exit 0"
is "$(sect nodes | grep -cE '^[1-4] +n[1-4] +10\.88\.[0-9]+\.1[1-4]:[0-9]+ +2 yes +up')" 4 "nodes: 4 up, 2 slots each (from Slurm)"
h=$(sect hello)
is "$(printf '%s\n' "$h" | grep -c '^hello from rank')" 8 "MPICH hello: default n = 8 slots"
for i in 1 2 3 4; do
	is "$(printf '%s\n' "$h" | grep -c "of 8 on n$i\$")" 2 "two ranks on n$i"
done
like "$(sect ring)" "ring: OK .*size=8" "MPICH ring across the 4 nodes"
# one srun starts every agent, all with node 0: each needs its own session dir (job dirs, the
# node segment's record), or a job's end on one node removed the others' records and left
# their node segments behind
is "$(sect dirs | sed -n 2p)" 4 "four agents, four session dirs on this one machine"
is "$(sect dirs | sed -n 3p)" 0 "no node segment left by the two jobs"
is "$(sect ppn | grep '^hello' | sed 's/.* on //' | sort | tr '\n' ' ')" "n1 n2 n3 n4 " "-ppn 1: one rank per node"
like "$(sect srunpmix)" "ring: OK laps=2 size=8" "a lamkit MPI ring of 8 under srun --mpi=pmix wires up through PMIx (pmix-proxy)"
like "$(sect srunpmix)" "rc=0" "exit 0"
if [ -x "$MPI_BIN/openmpi/ring" ]; then
	like "$(sect ompi)" "ring: OK .*size=8" "Open MPI ring across the Slurm nodes, on the agents' PMIx server"
	is "$(sect ompi | grep -c 'Selected component \[ext3x\]')" 8 "every rank on the PMIx component (ext3x)"
	like "$(sect ompi)" "rc=0" "exit 0"
	os=$(sect ompispawn)
	is "$(printf '%s\n' "$os" | grep -c '^parent: child [0-3] answered')" 4 "Open MPI MPI_Comm_spawn: 2 parents on n1, 4 children talk back over PMIx connect"
	is "$(printf '%s\n' "$os" | grep -cE 'spawned job 1 \(spawn\): rank [0-3]: pid [0-9]+ on n[2-4]$')" 4 "the children on the other Slurm nodes"
	like "$os" "rc=0" "exit 0"
fi
if [ -x "$DYN" ]; then
	sp=$(sect spawn)
	like "$sp" "lk_dyn: spawn parents=2 children=4 talked" "2 lamkit-MPI parents on n1 spawn 4 children on the other nodes: they talk both ways"
	like "$sp" "lk_dyn child: OK size=4 checks=" "the children's checks pass"
	is "$(printf '%s\n' "$sp" | grep -cE 'spawned job 1 \(lk_dyn\): rank [0-3]: pid [0-9]+ on n[2-4]$')" 4 \
		"the 4 children run on the free slots of n2..n4"
	like "$sp" "rc=0" "the spawning job exits 0"
	cr=$(sect crash)
	like "$cr" "rc=3" "a spawned child exiting 3 fails the job with 3"
	is "$(printf '%s\n' "$cr" | grep -c '^lamkit mpiexec:')" 1 "with one line"
	like "$cr" "^lamkit mpiexec: spawned job 1 \(lk_dyn\): rank 1 \(pid [0-9]+ on n[1-4]\) exited with status 3" \
		"naming the spawned job, its rank and node"
fi
like "$(sect halt)" "4 node\(s\) halted" "halt"
is "$(printf '%s\n' "$out" | sed -n '/^after:$/{n;p}')" 0 "the agents' srun step ended with them"
ok "$([ ! -e "$LAMKIT_TMPDIR/lamkit-$(id -u)/universe" ]; echo $?)" "universe state removed"
is "$(printf '%s\n' "$out" | sed -n '/^ranks left:$/{n;p}')" 0 "no parent or child left on any node after halt"
[ "$_tap_failed" -gt 0 ] && printf '%s\n' "$out" | sed 's/^/# /'
# CI found an agent gone before halt (n3 under ASan at stop 44, n2 under musl at stop 45, about
# one fresh-clone run in five): the nodes and logs taken just before halt, and Slurm's own logs
if [ "$_tap_failed" -gt 0 ]; then
	for f in "$T"/diag/*; do
		[ -s "$f" ] && { echo "#   --- ${f##*/}"; tail -n 40 "$f" | sed 's/^/#   /'; }
	done
	slurm_log | sed 's/^/#   /'
fi
done_testing
