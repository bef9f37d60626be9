#!/bin/bash
# t0330: stdio: whole lines never mixed between ranks, binary-safe, nothing lost at exit,
# stdin to rank 0 with backpressure and bounded memory (100 MB through; Hydra fails at 135 KB).
# timeout: 240
. "$(dirname "$0")/../lib/common.sh"
need_mpich
B=$MPI_BIN/mpich
N=$MPI_BIN/mpich/nompi_output

# 4 ranks flood stdout in 7-byte pieces; every line must come out whole and exactly once
lkx -n 4 "$N" -k 3000 -l 64 -c 7 >"$T/flood.out"; ok $? "flood job exits 0"
is "$(wc -l <"$T/flood.out")" 12000 "12000 lines, none lost"
bad=$(grep -cvE '^[0-3]:[0-9]+:[a-z]{64}$' "$T/flood.out")
is "$bad" 0 "no line mixes two ranks' bytes"
is "$(cut -d: -f1,2 "$T/flood.out" | sort -u | wc -l)" 12000 "every (rank, line) exactly once"
ordered=1
for r in 0 1 2 3; do
	grep "^$r:" "$T/flood.out" | cut -d: -f2 | sort -nc 2>/dev/null || ordered=0
done
ok $((1 - ordered)) "each rank's lines keep their order"
lkx -n 2 "$N" -k 500 -e -c 3 >/dev/null 2>"$T/flood.err"
is "$(grep -cE '^E[0-1]:[0-9]+:[a-z]{64}$' "$T/flood.err")" 1000 "stderr lines too come out whole"

out=$(lkx -n 2 "$N" -k 3 -p -l 4)
is "$(printf '%s' "$out" | grep -o '[01]:[0-9]:[a-z]\{4\}' | sort -u | wc -l)" 6 "a last line without newline is not lost at exit"
out=$(lkx -n 2 -l "$N" -k 2 -p -l 4)
is "$(printf '%s\n' "$out" | grep -c '^\[[01]\] [01]:[0-9]:[a-z]\{4\}$')" 4 "-l tags and ends the last partial line too"

# binary data: NUL bytes and no newlines at all
head -c 300000 /dev/urandom >"$T/rand.bin"
lkx -n 1 cat "$T/rand.bin" >"$T/rand.out"
cmp -s "$T/rand.bin" "$T/rand.out"; ok $? "300 KB of random bytes pass through unchanged"

# stdin: 100 MB piped to rank 0 of 3 (others do not read); checksum as a singleton computes it
head -c 100000000 /dev/urandom >"$T/big.bin"
want=$("$B/stdin" <"$T/big.bin" | sed 's/.*bytes=//')
got=$(cat "$T/big.bin" | LKX_TIMEOUT=120 lkx -n 3 "$B/stdin" | sed 's/.*bytes=//')
is "$got" "$want" "100 MB through a pipe reach rank 0 intact"
got=$(LKX_TIMEOUT=120 lkx -n 2 "$B/stdin" <"$T/big.bin" | sed 's/.*bytes=//')
is "$got" "$want" "100 MB from a regular file reach rank 0 intact"

# bounded memory with a slow reader: 30 MB to a rank that reads 64 KB every 2 ms. What is bounded
# is the growth of mpiexec's and the agent's own peak RSS (VmHWM) over the same job fed 64 KB, in
# this run and build (ASan's shadow memory and quarantine, or a busy machine, move the baseline,
# not the growth); buffering the input would add ~30 MB. Only each process's own peak is read:
# the rank (an MPICH program, ~16 MB with UCX) must not count as mpiexec's memory.
# slow_run FILE DELAY_MS: sets peak_m, peak_a (KB) and leaves the rank's output in $T/slow.out
slow_run() {
	local bg m= a= i v
	peak_m=0 peak_a=0
	cat "$1" | (cd "$T" && exec timeout -k 5 120 "$LAMKIT" mpiexec -v -n 1 "$B/stdin" -d "$2" -c 65536 >"$T/slow.out" 2>"$T/slow.err") &
	bg=$!
	for i in $(seq 200); do
		[ -n "$m" ] || m=$(pgrep -P "$bg" | head -n 1)
		[ -n "$a" ] || a=$(sed -n 's/^lamkit mpiexec: agent: pid \([0-9]*\) .*/\1/p' "$T/slow.err")
		[ -n "$m" ] && [ -n "$a" ] && break
		sleep 0.05
	done
	while [ -n "$m" ] && [ -d "/proc/$m" ]; do
		v=$(awk '/^VmHWM/ {print $2}' "/proc/$m/status" 2>/dev/null)
		[ -n "$v" ] && [ "$v" -gt "$peak_m" ] && peak_m=$v
		v=$(awk '/^VmHWM/ {print $2}' "/proc/$a/status" 2>/dev/null)
		[ -n "$v" ] && [ "$v" -gt "$peak_a" ] && peak_a=$v
		sleep 0.1
	done
	wait "$bg"
}
head -c 655360 "$T/big.bin" >"$T/small.bin"
head -c 30000000 "$T/big.bin" >"$T/mid.bin"
want=$("$B/stdin" <"$T/mid.bin" | sed 's/.*bytes=//')
# the baseline job lasts ~1 s (10 reads, 100 ms apart), so that even on a loaded machine the
# agent's pid is known and its peak is sampled before the job ends (a 64 KB job once ended first)
slow_run "$T/small.bin" 100
base_m=$peak_m base_a=$peak_a
slow_run "$T/mid.bin" 2
# buffering the input would add ~30 MB; ASan's quarantine keeps freed chunks a while, and under
# load (a reader further behind) it held 9 MB more once, so its bound is 16 MB
lim=8000
[ "$LAMKIT_VARIANT" = asan ] && lim=16000
is "$(sed 's/.*bytes=//' "$T/slow.out")" "$want" "a slow reader still gets every byte"
ok "$([ "$base_m" -gt 0 ] && [ "$base_a" -gt 0 ] && [ "$peak_m" -gt 0 ] && [ "$peak_a" -gt 0 ]; echo $?)" \
	"peak RSS read for mpiexec ($base_m KB, then $peak_m KB) and the agent ($base_a KB, then $peak_a KB)"
ok "$([ $((peak_m - base_m)) -lt $lim ]; echo $?)" \
	"mpiexec's memory stays bounded (peak RSS +$((peak_m - base_m)) KB for 30 MB over 640 KB, < $lim)"
ok "$([ $((peak_a - base_a)) -lt $lim ]; echo $?)" \
	"the agent's memory stays bounded (peak RSS +$((peak_a - base_a)) KB for 30 MB over 640 KB, < $lim)"

# ranks that do not read stdin do not block the job; rank 0 exiting early is fine
is "$(head -c 5000000 "$T/big.bin" | lkx -n 2 true; echo $?)" 0 "unread stdin does not block or fail the job"
is "$(yes | lkx -n 1 head -n 2)" "y
y" "rank 0 closing stdin early stops the feed (yes | ...)"
is "$(lkx -n 1 cat </dev/null | wc -c)" 0 "stdin from /dev/null gives EOF"
done_testing
