#!/bin/bash
# t0375: placement as Open MPI and Hydra users write it. On a synthetic machine (2 sockets x 8
# cores x 2 threads, 2 NUMA nodes per socket, as sysfs files the agent reads with LAMKIT_SYSFS)
# (hwloc reads those files as the same machine) lamkit's --report-bindings equals what Open
# MPI's mpirun prints for the same machine
# (HWLOC_SYNTHETIC, --display-map) and Hydra's bindings (HYDRA_TOPO_DEBUG), for a few requests
# (bench/placement runs the whole table); on the real host a bound rank's affinity is its
# report and its OpenMP variables follow its binding unless the user set them; on a machine
# numbered as Intel numbers hyperthreads, OMP_PLACES names the real CPU numbers; bad
# requests are one-line usage errors, and a node that cannot do what was asked ends the job
# with one line naming it.
# timeout: 180
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/sysfs.sh"
export LKX_TIMEOUT=60

syn=$(sysfs_make "$T/m1" "pack:2 numa:2 l3:1 core:4 pu:2")
M1=$T/m1/sys/devices/system
# the synthetic machine is the one hwloc (Open MPI's and Hydra's topology library) sees there
if command -v lstopo-no-graphics >/dev/null; then
	is "$(HWLOC_COMPONENTS=-x86 HWLOC_FSROOT=$T/m1 lstopo-no-graphics --of synthetic 2>&1)" \
		"$(lstopo-no-graphics --input "$syn" --of synthetic 2>&1)" \
		"hwloc reads the synthetic sysfs as the machine its synthetic notation describes"
else
	ok 0 "# SKIP lstopo (hwloc-nox) not installed"
fi
# lamkit's report and mpirun's map as "rank|binding" lines
lk_binds() { LAMKIT_SYSFS=$M1 lkx --report-bindings "$@" true 2>&1 |
	sed -n 's/.*MCW rank \([0-9]*\) bound to \(.*\)$/\1|\2/p; s/.*MCW rank \([0-9]*\) is not bound.*/\1|unbound/p' |
	sed 's/\]: \[/]:[/' | sort -n; }
ompi_binds() { (cd "$T" && HWLOC_SYNTHETIC=$syn HWLOC_THISSYSTEM=1 timeout 60 mpirun.openmpi \
	--allow-run-as-root "$@" --display-map true 2>&1) |
	sed -n 's/.*Process rank: \([0-9]*\) Bound: \(.*\)$/\1|\2/p' | sed 's/|N\/A$/|unbound/; s/|UNBOUND$/|unbound/' | sort -n; }
if command -v mpirun.openmpi >/dev/null; then
	for req in "-n 4 --map-by socket" "-n 4 --map-by ppr:2:socket:pe=2" \
		"-n 8 --map-by socket --rank-by core" "-n 6 --map-by slot --bind-to core" \
		"-n 2 --bind-to hwthread" "-n 5 --map-by socket:span --bind-to core"; do
		# shellcheck disable=SC2086 # requests are words
		want=$(ompi_binds $req)
		# shellcheck disable=SC2086
		got=$(lk_binds $req)
		is "$got" "$want" "$req: each rank's binding as Open MPI's mpirun reports it"
		[ -n "$want" ] || diag "mpirun reported nothing for $req"
	done
else
	ok 0 "# SKIP mpirun.openmpi not installed"
fi
if command -v mpiexec.hydra >/dev/null; then
	for req in "-n 4 -bind-to core -map-by socket" "-n 3 -bind-to core:2"; do
		# shellcheck disable=SC2086
		want=$(cd "$T" && HYDRA_TOPO_DEBUG=1 HWLOC_SYNTHETIC=$syn HWLOC_THISSYSTEM=1 timeout 60 \
			mpiexec.hydra $req true 2>&1 | sed -n 's/^process \([0-9]*\) binding: \([01]*\)$/\1|\2/p' | sort -n)
		# shellcheck disable=SC2086
		got=$(lk_binds $req | sed 's/^\([0-9]*\)|.*:\(\[.*\]\)$/\1|\2/; s/[][\/]//g; s/B/1/g; s/\./0/g')
		is "$got" "$want" "Hydra's $req: the same CPUs as Hydra binds"
	done
else
	ok 0 "# SKIP mpiexec.hydra not installed"
fi

# the real host: each rank's affinity is what its report says, and OpenMP follows the binding
out=$(lkx -n 2 --bind-to core --report-bindings sh -c \
	'echo "$PMI_RANK $(awk "/^Cpus_allowed_list/ {print \$2}" /proc/self/status) $OMP_NUM_THREADS $OMP_PLACES $OMP_PROC_BIND"' 2>&1)
nrep=$(printf '%s\n' "$out" | grep -c 'MCW rank [01] bound to socket')
is "$nrep" 2 "--report-bindings: one line per rank on the real host"
for r in 0 1; do
	line=$(printf '%s\n' "$out" | grep "^$r ")
	cpus=$(echo "$line" | awk '{print $2}')
	like "$line" "^$r [0-9]+ 1 \{$cpus\} close$" "rank $r: bound to one CPU, OMP_NUM_THREADS=1, OMP_PLACES={$cpus}, OMP_PROC_BIND=close"
done
is "$(OMP_NUM_THREADS=7 lkx -n 1 --bind-to core sh -c 'echo $OMP_NUM_THREADS')" 7 "a user's OMP_NUM_THREADS is kept"
is "$(lkx -n 1 sh -c 'echo ${OMP_PLACES:-none}')" none "no binding, no OpenMP variables"

# Intel's numbering: thread t of core c is CPU t x cores + c; OMP_PLACES names those CPUs
sysfs_make "$T/m2" "pack:2 numa:1 l3:1 core:4 pu:2" interleave >/dev/null
out=$(LAMKIT_SYSFS=$T/m2/sys/devices/system lkx -n 2 --map-by socket:pe=2 sh -c 'echo "$PMI_RANK $OMP_NUM_THREADS $OMP_PLACES"' | sort)
is "$out" "$(printf '0 2 {0,8},{1,9}\n1 2 {4,12},{5,13}')" "pe=2 on an interleaved machine: OMP_PLACES per core, real CPU numbers"

# bad requests: one line, usage error
for bad in "--map-by rack|--map-by 'rack'" "--map-by core:pe=2|--map-by core with pe=2" \
	"--bind-to core:loose|unknown qualifier 'loose'" "--rank-by socket:up|--rank-by 'socket:up'" \
	"--map-by ppr:two:socket|ppr needs N:OBJECT" "--cpus-per-rank 0|needs a number of CPUs"; do
	# shellcheck disable=SC2086
	err=$(lkx ${bad%%|*} -n 1 true 2>&1); rc=$?
	is "$rc $(printf '%s\n' "$err" | wc -l)" "100 1" "${bad%%|*}: one line, usage error"
	like "$err" "${bad#*|}" "... saying what is wrong"
done
err=$(LAMKIT_SYSFS=$M1 lkx -n 8 --map-by ppr:2:numa:pe=4 true 2>&1); rc=$?
is "$rc" 0 "ppr:2:numa:pe=4 fills the machine exactly"
err=$(LAMKIT_SYSFS=$M1 lkx -n 9 --map-by ppr:2:numa true 2>&1); rc=$?
like "$rc $err" "^100 .*ppr:2:numa places at most 8 ranks" "more ranks than ppr places: refused before starting"
err=$(LAMKIT_SYSFS=$M1 lkx -n 40 --map-by socket:nooversubscribe true 2>&1); rc=$?
like "$rc $err" "^100 .*40 ranks on a node of 32 slots, and :nooversubscribe was asked" \
	":nooversubscribe with more ranks than slots: the agent says so and the job does not start"
err=$(LAMKIT_SYSFS=$M1 lkx -n 4 --map-by socket:pe=8 --bind-to core true 2>&1); rc=$?
like "$rc $err" "^100 .*--bind-to core puts 2 ranks on a core with 1 CPU;" "more CPUs asked than the node has: refused, naming the binding"
sysfs_make "$T/m3" "pack:1 numa:1 core:2 pu:1" >/dev/null
err=$(LAMKIT_SYSFS=$T/m3/sys/devices/system lkx -n 2 --bind-to l3cache true 2>&1); rc=$?
like "$rc $err" "^100 .*on [^:]+: this node has no l3cache to bind to" "a binding the node cannot do: one line naming the node"
done_testing
