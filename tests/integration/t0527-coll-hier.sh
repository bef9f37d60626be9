#!/bin/bash
# t0527: node-aware collectives of lamkit's MPI. A universe of two fake nodes on this host (boot
# module `local`; ranks of different agents talk tcp, ranks of one agent shm) runs tests/mpi/
# lk_hier (barrier, bcast, reduce, allreduce, allgather value by value on communicators spread over the
# nodes in several ways, non-commutative ops kept in rank order) with block and round-robin
# placement and an uneven split, with and without LAMKIT_COLL_HIER=0. Then it counts, from the
# transport's own counters (LAMKIT_TP_STATS=1), the tcp fragments that 10 calls of each
# collective send with 2 nodes x 2 ranks placed round-robin (the worst case for flat algorithms):
# node-aware must reach the minimum of its algorithm (bcast, reduce: nodes - 1 = 1 message per
# call; barrier, allreduce, allgather: one exchange between the 2 leaders = 2), and the flat
# algorithms send more. The test programs lk_coll and lk_nbc pass on the same placement.
# timeout: 150
. "$(dirname "$0")/../lib/common.sh"
D=$LAMKIT_TOP/out/mpi-lamkit
[ "$LAMKIT_VARIANT" = asan ] && D=$LAMKIT_TOP/out/asan/mpi-lamkit
[ -x "$D/lk_hier" ] || skip_all "own MPI test programs not built"
lkmpi_before=$(ls /dev/shm | grep '^lkmpi-' | sort)
U="$LAMKIT_TMPDIR/lamkit-$(id -u)/universe"
at_exit '[ -f "$U" ] && timeout 30 "$LAMKIT" wipe >/dev/null 2>&1'
lk() { (cd "$T" && timeout -k 5 60 "$LAMKIT" "$@"); }

printf 'boot = "local"\nnode "a" { cpu = 3 }\nnode "b" { cpu = 2 }\n' >"$T/s.lua"
lk boot s.lua >/dev/null 2>&1
is $? 0 "universe of two fake nodes"
agents=$([ -f "$U" ] && awk '$1 == "node" { print $8 }' "$U" | tr '\n' ' ')

for args in "-n 4" "-n 4 --map-by node" "-n 5" "-n 5 --map-by node"; do
	# shellcheck disable=SC2086 # options
	out=$(LKX_TIMEOUT=90 lkx $args "$D/lk_hier" 2>&1)
	is "$?" 0 "lk_hier $args exits 0"
	like "$out" "lk_hier: OK size=[45] " "lk_hier $args: every value right"
done
out=$(LAMKIT_COLL_HIER=0 LKX_TIMEOUT=90 lkx -n 4 --map-by node "$D/lk_hier" 2>&1)
like "$out" "lk_hier: OK size=4 " "lk_hier with the flat algorithms (LAMKIT_COLL_HIER=0)"

# tcp fragments (and, with F=bytes, payload bytes) sent by every rank together, from the lines
# LAMKIT_TP_STATS=1 prints at the end
tcp_frags() {
	LAMKIT_TP_STATS=1 LKX_TIMEOUT=60 lkx -n 4 --map-by node "$D/lk_hier" count "$@" 2>&1 |
		awk -v k="${F:-frags}" '/^lamkit tp: rank [0-9]+ sent/ { n++; for (i = 1; i <= NF; i++) if ($i == "tcp") f += (k == "bytes" ? $(i + 3) : $(i + 1)) }
			END { print (n == 4 ? f + 0 : "missing lines: " n + 0) }'
}
base=$(tcp_frags barrier 0)
like "$base" '^[0-9]+$' "the transport reports its counters ($base tcp fragments without any call)"
for want in barrier:2 bcast:1 reduce:1 allreduce:2 allgather:2; do
	op=${want%%:*} min=${want#*:}
	h=$(tcp_frags "$op" 10)
	f=$(LAMKIT_COLL_HIER=0 tcp_frags "$op" 10)
	is "$h" "$((base + 10 * min))" "$op, node-aware: $min tcp message(s) per call between 2 nodes x 2 ranks"
	ok "$([ "$f" -gt "$h" ] 2>/dev/null; echo $?)" "$op, flat: more ($(((f - base) / 10)) per call)"
done

b0=$(F=bytes tcp_frags bcast 0)
is "$(F=bytes tcp_frags bcast 10)" "$((b0 + 80))" "bcast of 8 B, node-aware: 8 payload bytes per call cross the network"
is "$(F=bytes tcp_frags allreduce 10)" "$((b0 + 160))" "allreduce of 8 B, node-aware: 16 payload bytes per call"
is "$(F=bytes tcp_frags allgather 10)" "$((b0 + 320))" "allgather of 8 B from each of 4 ranks, node-aware: each node's 16 B cross once"

for p in lk_coll lk_nbc; do
	out=$(LKX_TIMEOUT=90 lkx -n 4 --map-by node "$D/$p" 2>&1)
	like "$out" "$p: OK size=4" "$p across the two nodes, round-robin"
done

lk halt >/dev/null 2>&1
is $? 0 "halt"
# shellcheck disable=SC2086 # a list of pids
wait_gone 10 $agents
ok $? "every agent gone"
is "$(lkmpi_leaked "$lkmpi_before")" "" "no lkmpi shared-memory segment left"
done_testing
