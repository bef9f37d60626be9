#!/bin/bash
# t0505: our own MPI test programs (tests/mpi/lk_*.c) built with Debian's MPICH and run under
# MPICH's own launcher (mpiexec.hydra), and under lamkit mpiexec: a test that only lamkit's
# MPI passes checks lamkit's idea of MPI, not MPI. Every lk_* program found is run, so a new
# one is covered without editing this file, except lk_dyn (dynamic processes): Debian's MPICH
# (ch4:ucx) cannot spawn under Hydra or lamkit (t0540), so it has no reference there; and lk_ft,
# which is a job whose nodes the test kills (t0465: mpiexec --on-node-failure continue): it
# prints no "OK size=N" on its own, and Hydra ends a job whose node dies.
# timeout: 400
. "$(dirname "$0")/../lib/common.sh"
need_mpich
B=$MPI_BIN/mpich
command -v mpiexec.hydra >/dev/null || skip_all "mpiexec.hydra not installed"
progs=$(cd "$B" && ls lk_* 2>/dev/null | grep -v '\.' | grep -vx -e lk_dyn -e lk_ft)
[ -n "$progs" ] || skip_all "no lk_* programs built with mpicc.mpich"

# Hydra does not depend on which lamkit build runs the suite: once, on the musl pass.
if [ "$LAMKIT_VARIANT" = musl ]; then
	for p in $progs; do
		for n in 2 4; do
			out=$(cd "$T" && timeout -k 5 120 mpiexec.hydra -n $n "$B/$p" 2>&1)
			rc=$?
			is "$rc" 0 "$p -n $n built with mpicc.mpich exits 0 under mpiexec.hydra"
			like "$out" "$p: OK size=$n" "$p -n $n: every check passes under MPICH itself"
		done
	done
fi
# The same MPICH-built programs under lamkit's launcher (PMI across one agent and three).
# lk_hier over three agents: Debian's MPICH 4.0.2 sums wrong in MPI_Reduce of 1000 int64 on a
# communicator split over three nodes unevenly (602 for 604 with ranks 1-4 of 2+2+1, nodes as
# PMI_process_mapping (vector,(0,2,2),(2,1,1)) says) when its device collectives run on fake nodes
# of one host; MPIR_CVAR_DEVICE_COLLECTIVES=none (or MPIR_CVAR_NOLOCAL=1) gives the right sum, so
# the program runs with it here.
for p in $progs; do
	out=$(LKX_TIMEOUT=120 lkx -n 4 "$B/$p" 2>&1)
	like "$out" "$p: OK size=4" "$p -n 4 built with mpicc.mpich passes under lamkit mpiexec"
	out=$([ "$p" != lk_hier ] || export MPIR_CVAR_DEVICE_COLLECTIVES=none
		LKX_TIMEOUT=120 lkx --local-agents 3:2 -n 5 "$B/$p" 2>&1)
	like "$out" "$p: OK size=5" "$p -n 5 over 3 agents, MPICH-built, passes under lamkit mpiexec"
done
done_testing
