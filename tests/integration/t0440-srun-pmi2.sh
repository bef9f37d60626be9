#!/bin/bash
# t0440: lamkit's MPI and libpmi under a foreign launcher: `srun --mpi=pmi2` on a real 4-node
# Slurm (one slurmd per namespace node), no lamkit agent anywhere. Programs built with
# `lamkit mpicc` (glibc and -musl) wire up through Slurm's PMI-2 server: ranks find their node
# mates from PMI_process_mapping (MPI_Comm_split_type), use shared memory inside a node and tcp
# only across nodes; our PMI-2 API check runs there too, and PMI_Topo_cluster_info falls back
# to the node from Slurm's mapping.
# timeout: 240
. "$(dirname "$0")/../lib/common.sh"
[ "$(id -u)" = 0 ] || skip_all "needs root (network namespaces, daemons)"
. "$LAMKIT_TOP/tests/lib/slurm.sh"
slurm_deps >/dev/null 2>&1 || skip_all "Slurm packages not installable"
src=$LAMKIT_TOP/tests/mpi
P2=$LAMKIT_TOP/out/testprogs/pmi2_check
for p in ring placement collectives hello; do
	"$LAMKIT" mpicc -O2 -o "$T/${p}_g" "$src/$p.c" || { ok 1 "mpicc $p.c"; done_testing; }
	"$LAMKIT" mpicc -musl -O2 -o "$T/${p}_m" "$src/$p.c" || { ok 1 "mpicc -musl $p.c"; done_testing; }
done
ok 0 "lamkit mpicc built ring, placement, collectives, hello (glibc and -musl)"
at_exit slurm_down
slurm_up 4 || { ok 1 "slurm_up 4"; slurm_log | sed 's/^/# /'; done_testing; }
ok 0 "slurm_up 4"

# srun ARGS...: 8 tasks, 2 per node, Slurm's PMI-2 plugin, bounded in time
run() { (cd "$T" && timeout -k 5 90 srun -N4 -n8 --ntasks-per-node=2 --mpi=pmi2 -p "$SLURM_PARTITION" "$@" 2>&1); }

for v in g m; do
	name=glibc
	[ $v = m ] && name=musl
	out=$(run "$T/placement_$v"); rc=$?
	is "$rc" 0 "[$name] placement under srun --mpi=pmi2 exits 0"
	is "$(printf '%s\n' "$out" | grep -c '^placement: rank')" 8 "[$name] all 8 ranks report"
	bad=0
	for r in 0 1 2 3 4 5 6 7; do
		a=$((r - r % 2)) b=$((r - r % 2 + 1))
		printf '%s\n' "$out" | grep -Eq "^placement: rank $r of 8 node \[$a,$b\] local $((r % 2)) " || bad=$((bad + 1))
	done
	is "$bad" 0 "[$name] MPI_Comm_split_type: each node holds exactly its two block ranks"

	out=$(LAMKIT_TP_DEBUG=1 run "$T/ring_$v" 3); rc=$?
	is "$rc" 0 "[$name] ring exits 0"
	like "$out" "ring: OK laps=3 size=8" "[$name] ring passes the token through all 4 nodes"
	conns=$(printf '%s\n' "$out" | sed -n 's/^lamkit tcp: rank \([0-9]*\) -> rank \([0-9]*\): connected.*/\1 \2/p')
	ncross=0 nsame=0
	while read -r a b; do
		[ -n "$a" ] || continue
		if [ $((a / 2)) = $((b / 2)) ]; then nsame=$((nsame + 1)); else ncross=$((ncross + 1)); fi
	done <<<"$conns"
	ok "$([ "$ncross" -ge 4 ]; echo $?)" "[$name] tcp connects ranks of different nodes ($ncross connections)"
	is "$nsame" 0 "[$name] no tcp between ranks of one node (they use shared memory)"

	out=$(run "$T/collectives_$v"); rc=$?
	is "$rc" 0 "[$name] collectives exit 0"
	like "$out" "collectives: OK size=8" "[$name] collectives correct across nodes"
done

out=$(run "$T/hello_g"); rc=$?
is "$(printf '%s\n' "$out" | grep -c '^hello from rank .* of 8 on n[1-4]$')" 8 "hello: 8 ranks of one job on n1..n4"

out=$(run "$P2" --no-names --plain); rc=$?
is "$rc" 0 "lamkit's PMI2_* API against Slurm's PMI-2 server"
is "$(printf '%s\n' "$out" | grep -c '^pmi2_check: rank [0-7] ok (8 ranks)')" 8 "all 8 ranks: job attributes, node attributes (waited for), kvs put/fence/get"
like "$out" "mapping \(vector,\(0,4,2\)\)" "Slurm's process mapping reached the client"
nodeattr_ok=1
for r in 0 1 2 3 4 5 6 7; do
	printf '%s\n' "$out" | grep -q "^pmi2_check: rank $r nodeattr 'from rank $((r - r % 2)), 2 local'" || nodeattr_ok=0
done
is "$nodeattr_ok" 1 "each rank read the node attribute its node's first rank stored"

out=$(run "$LAMKIT_TOP/out/testprogs/pmi_topo" any); rc=$?
is "$rc $(printf '%s\n' "$out" | sed -n 's/^topo rank=\([0-9]*\) node=\([-0-9]*\) ranks=\([0-9,]*\) .*attr=no OK$/\1:\2:\3/p' | sort -n | tr '\n' ' ')" \
	"0 0:0:0,1 1:0:0,1 2:1:2,3 3:1:2,3 4:2:4,5 5:2:4,5 6:3:6,7 7:3:6,7 " \
	"PMI_Topo_cluster_info under srun: node numbers and groups from Slurm's mapping (no lamkit_topo there)"

out=$(LAMKIT_PMI_VERSION=1 run "$T/ring_g" 2); rc=$?
like "$out" "ring: OK laps=2 size=8" "LAMKIT_PMI_VERSION=1: the same program over Slurm's PMI-1 side"

[ "$_tap_failed" -gt 0 ] && slurm_log | sed 's/^/# /'
done_testing
