#!/bin/bash
# t0535: two tcp connections to each peer (LAMKIT_TP=tcp,tcp: the multipath layer stripes large
# fragments over both, doc/PROTOCOL-mpi-wire.md section 7), on loopback:
#  - 4 MiB messages (bulk), 0 B .. 8 MiB with every byte checked (large), the point-to-point
#    and collective semantic tests pass, and the counters show both connections carried bytes
#    and fragments that overtook others waited their turn;
#  - the second connection cut mid-transfer (ss -K) -> the job fails with one line naming the
#    second connection and both ranks, as a failing path of a multipath peer does, and nothing
#    is left running.
# timeout: 180
. "$(dirname "$0")/../lib/common.sh"
D=$LAMKIT_TOP/out/mpi-lamkit
[ "$LAMKIT_VARIANT" = asan ] && D=$LAMKIT_TOP/out/asan/mpi-lamkit
[ -x "$D/bulk" ] || skip_all "own MPI test programs not built"
tp2() { LAMKIT_TP=tcp,tcp LAMKIT_TP_STATS=1 LKX_TIMEOUT=${LKX_TIMEOUT:-120} lkx "$@"; }

M=256
[ "$LAMKIT_VARIANT" = asan ] && M=64
tp2 -n 2 "$D/bulk" -m $M >"$T/bulk.out" 2>&1
is $? 0 "$M MiB in 4 MiB messages over two tcp connections exits 0"
like "$(grep '^bulk:' "$T/bulk.out")" "^bulk: OK bytes=$((M << 20)) " "every byte arrived, in order (sender's checksum)"
l=$(grep 'lamkit tp: rank 0 -> rank 1: tcp+tcp2:' "$T/bulk.out")
like "$l" "tcp_bytes=[1-9][0-9]{6,} tcp2_frags=[1-9][0-9]* tcp2_bytes=[1-9][0-9]{6,}" \
	"both connections carried megabytes"
echo "# $l"
like "$(grep 'lamkit tp: rank 1 -> rank 0: tcp+tcp2:' "$T/bulk.out")" "from rank 0: held=[1-9]" \
	"rank 1 held fragments that came early on one connection until their turn"

out=$(tp2 -n 2 "$D/large" 2>&1)
is $? 0 "large (0 B .. 8 MiB) over two tcp connections exits 0"
like "$out" "large: OK" "... every byte checked"
for p in lk_p2p lk_coll; do
	out=$(tp2 -n 3 "$D/$p" 2>&1)
	is $? 0 "$p -n 3 over two tcp connections exits 0"
	like "$out" "$p: OK size=3" "... and its checks pass"
done

# ---- the second connection cut mid-transfer ----
LAMKIT_TP_DEBUG=1 tp2 -n 2 "$D/bulk" -s 30 -p -c 4096 >"$T/cut.out" 2>&1 &
job=$!
for ((i = 0; i < 200; i++)); do
	grep -q '^bulk: progress' "$T/cut.out" 2>/dev/null && break
	sleep 0.05
done
port=$(sed -n 's/^lamkit tcp: rank 1: card lk-tcp2-1=\([0-9]*\);.*/\1/p' "$T/cut.out" | head -n 1)
ok "$([ -n "$port" ]; echo $?)" "rank 1's second listener is on port ${port:-?}"
t0=$SECONDS
ss -K dst 127.0.0.1 dport = ":$port" >/dev/null 2>&1
ss -K src 127.0.0.1 sport = ":$port" >/dev/null 2>&1
wait $job
rc=$?
ok "$([ "$rc" != 0 ] && [ $((SECONDS - t0)) -lt 20 ]; echo $?)" \
	"the job fails (exit $rc) $((SECONDS - t0)) s after the cut, not at its end"
like "$(grep 'second connection to rank' "$T/cut.out" | head -n 1)" \
	"tcp: rank [01]: second connection to rank [01]: " "one line names the second connection and both ranks"
unlike "$(grep '^bulk: OK' "$T/cut.out")" . "no transfer claims success"
sleep 0.5
unlike "$(pgrep -f "$D/bulk" || true)" . "nothing is left running"
[ "$rc" = 0 ] && diag "$(tail -n 20 "$T/cut.out")"
done_testing
