#!/bin/bash
# shellcheck source-path=SCRIPTDIR disable=SC2016
# tests/integration/t0910-slurm-selftest.sh: proves tests/lib/slurm.sh (4-node Slurm on netns nodes).
# Needs root; exits 77 (skip) otherwise. Installs the Slurm packages if missing (slurm_deps).
# Prints TAP-ish lines, exits 1 on any failure.
set -u
if [ "$(id -u)" != 0 ]; then
	echo "1..0 # SKIP t0910: needs root (network namespaces, daemons)"
	exit 77
fi
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../lib/slurm.sh
. "$here/../lib/slurm.sh"
# Packages first, outside the 90 s watchdog (a first install can take minutes).
if ! slurm_deps; then
	echo "not ok 1 - slurm_deps (apt-get install $_slurm_pkgs)"
	exit 1
fi
if [ -z "${LK_T0910_WATCHED-}" ]; then
	LK_T0910_WATCHED=1 exec timeout -k 30 90 "$0" "$@"
fi

n=0 failed=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
notok() { n=$((n + 1)) failed=$((failed + 1)); echo "not ok $n - $*"; }
check() { # check "what" cmd...: ok if cmd succeeds
	local what=$1
	shift
	if "$@"; then ok "$what"; else notok "$what"; fi
}
now() { echo "${EPOCHREALTIME/./}"; } # microseconds
ms() { echo $((($2 - $1) / 1000)); }

trap slurm_down EXIT
trap 'exit 130' INT TERM

ok "slurm_deps: $_slurm_pkgs installed"
t0=$(now)
if ! slurm_up 4; then
	notok "slurm_up 4"
	slurm_log | sed 's/^/# /'
	exit 1
fi
ok "slurm_up 4 ($(ms "$t0" "$(now)") ms, conf $SLURM_CONF)"
dir=$NETNS_DIR prefix=$NETNS_PREFIX subnet=$NETNS_SUBNET
pids=
for f in "$SLURM_DIR"/*.pid; do pids="$pids $(_netns_pidof_file "$f")"; done
for node in $NETNS_NODES; do pids="$pids $(netns_sshd_pid "$node")"; done

out=$(timeout 10 sinfo -h -o '%D %t %N' 2>&1)
check "sinfo: 4 idle nodes n[1-4] ($out)" test "$out" = "4 idle n[1-4]"

out=$(timeout 30 srun -N4 -n8 --ntasks-per-node=2 printenv SLURMD_NODENAME 2>&1 | sort | tr '\n' ' ')
check "srun -N4 -n8 --ntasks-per-node=2: two tasks per node ($out)" test "$out" = "n1 n1 n2 n2 n3 n3 n4 n4 "

out=$(timeout 30 srun -N4 -n8 --ntasks-per-node=2 -l \
	sh -c 'echo "$(hostname) $SLURM_NODEID $SLURM_LOCALID $SLURM_LAUNCH_NODE_IPADDR"' 2>&1 | sort -n)
want=$(printf '%s\n' "3: n2 1 1 $NETNS_BRIDGE_ADDR")
check "task 3: hostname n2, node id 1, local id 1, launch addr $NETNS_BRIDGE_ADDR" \
	test "$(echo "$out" | grep '^3:')" = "$want"

if command -v mpicc.mpich >/dev/null 2>&1; then
	cat >"$dir/hello.c" <<'EOF'
#include <mpi.h>
#include <stdio.h>
int main(int argc, char **argv)
{
	int rank, size, len;
	char name[MPI_MAX_PROCESSOR_NAME];
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	MPI_Get_processor_name(name, &len);
	MPI_Barrier(MPI_COMM_WORLD);
	printf("%d/%d %s\n", rank, size, name);
	MPI_Finalize();
	return 0;
}
EOF
	if timeout 60 mpicc.mpich -o "$dir/hello" "$dir/hello.c" 2>"$dir/hello.err"; then
		out=$(timeout 30 srun -N2 -n2 --mpi=pmi2 "$dir/hello" 2>&1 | sort | tr '\n' ' ')
		check "srun -N2 --mpi=pmi2 MPICH hello ($out)" test "$out" = "0/2 n1 1/2 n2 "
	else
		notok "mpicc.mpich hello.c: $(head -c 300 "$dir/hello.err")"
	fi
else
	ok "srun --mpi=pmi2 MPICH hello # SKIP no mpicc.mpich"
fi

t1=$(now)
slurm_down
el=$(ms "$t1" "$(now)")
left=$(ip netns list | grep -E "^${prefix}n[0-9]+( |\$)")
check "slurm_down ($el ms): no namespace left ($left)" test -z "$left"
alive=
for p in $pids; do # a zombie waiting for pid 1 to reap it counts as gone
	st=$(cut -d' ' -f3 "/proc/$p/stat" 2>/dev/null)
	[ -n "$st" ] && [ "$st" != Z ] && alive="$alive $p:$st"
done
check "no munged, slurmctld, slurmd or sshd left ($alive)" test -z "$alive"
left=$(ip -o link show | grep -E ": ${prefix}(v[0-9]+|br)[@:]")
check "no veth or bridge left ($left)" test -z "$left"
check "temp dir removed" test ! -e "$dir"
check "no address of the subnet left" test -z "$(ip -4 -o addr show | grep -F " $subnet.")"
slurm_down
check "slurm_down is idempotent" test -z "$(ip netns list | grep -E "^${prefix}n")"

echo "1..$n"
[ "$failed" = 0 ] || { echo "# $failed of $n failed"; exit 1; }
exit 0
