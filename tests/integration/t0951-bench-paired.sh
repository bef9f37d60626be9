#!/bin/bash
# t0951: bench/lib.sh's short runs paired round by round (bench_rounds, bench_paired_table), which
# the benches use because this machine's speed flips between two levels for seconds at a time:
# every configuration runs once a round (a failed run leaves no figure, the round hook runs first),
# and the table has each configuration's median over rounds, lamkit's paired ratios (the median
# over rounds of lamkit's figure against the peer's of the same round), and the median round's
# two figures against the better peer, for lower-is-better and higher-is-better figures and for
# keys of two words (op size).
# timeout: 60
. "$(dirname "$0")/../lib/common.sh"
# shellcheck source=bench/lib.sh
. "$LAMKIT_TOP/bench/lib.sh"

# A stand-in for an MPI benchmark: prints its job header and, for the round in $T/round, the
# figures of its configuration ($FAKE) from $T/data ("config round size op-figure lat-figure");
# "fail" there makes the run fail.
cat >"$T/fake" <<'SH'
#!/bin/bash
r=$(cat "$FAKE_DIR/round")
echo "# fake: ranks=2"
awk -v c="$FAKE" -v r="$r" '$1 == c && $2 == r { if ($3 == "fail") exit 3; print $3, $4; print "bcast", $3, $5 }' "$FAKE_DIR/data" || exit 3
SH
chmod +x "$T/fake"
# round  lamkit           mpich            ompi             (size 8: lat; bcast 8: the same x 10)
# 1      5.0              6.0              7.0              best 6.0, lk/best 0.833
# 2      10.0             11.0             9.0              best 9.0, lk/best 1.111
# 3      5.5              5.0              8.0              best 5.0, lk/best 1.100
# 4      fails            7.0              7.5
# 5      4.0              8.0              5.0              best 5.0, lk/best 0.800
cat >"$T/data" <<'D'
lamkit 1 8 5.0 50.0
lamkit 2 8 10.0 100.0
lamkit 3 8 5.5 55.0
lamkit 4 fail
lamkit 5 8 4.0 40.0
mpich 1 8 6.0 60.0
mpich 2 8 11.0 110.0
mpich 3 8 5.0 50.0
mpich 4 8 7.0 70.0
mpich 5 8 8.0 80.0
ompi 1 8 7.0 70.0
ompi 2 8 9.0 90.0
ompi 3 8 8.0 80.0
ompi 4 8 7.5 75.0
ompi 5 8 5.0 50.0
D
export FAKE_DIR=$T
names=(lamkit mpich ompi)
launch=("env FAKE=lamkit" "env FAKE=mpich" "env FAKE=ompi")
exe=("$T/fake" "$T/fake" "$T/fake")
hook() { echo "$1" >"$T/round"; echo "$1" >>"$T/hooked"; }
BENCH_ROUND_HOOK=hook
mkdir -p "$T/d"
bench_rounds "$T/d" R 5 2 -s 1 2>"$T/err"
is "$(paste -sd ' ' "$T/hooked")" "1 2 3 4 5" "the hook runs first in each of the 5 rounds"
is "$(cd "$T/d" && ls | sort | paste -sd ' ')" \
	"lamkit.R1.out lamkit.R2.out lamkit.R3.out lamkit.R5.out mpich.R1.out mpich.R2.out mpich.R3.out mpich.R4.out mpich.R5.out ompi.R1.out ompi.R2.out ompi.R3.out ompi.R4.out ompi.R5.out" \
	"every configuration ran once a round; the failed run left no output"
like "$(cat "$T/err")" "bench: lamkit failed \(exit 3\)" "and the failure is reported"

# lower is better: medians lamkit (5, 10, 5.5, 4) 5.25 (printed 5.2), mpich 7.0, ompi 7.5; lk/mpich: the median
# of 0.833 0.909 1.1 0.5 = 0.871; lk/ompi: of 0.714 1.111 0.688 0.8 = 0.757; lk/best: the lower
# middle of 0.8 0.833 1.1 1.111 is round 1's 0.833 (5.0 against 6.0)
tab=$(bench_paired_table "$T/d" R 5 1 1 lower lat:size lamkit "mpich ompi" | awk -F '\t' '$1 == "lat:size" || $1 == 8')
is "$(printf '%s\n' "$tab" | head -n 1)" "$(printf 'lat:size\tlamkit\tmpich\tompi\tlk/mpich\tlk/ompi\tlk/best\trounds\tmed_lk\tmed_best')" "the header"
is "$(printf '%s\n' "$tab" | sed -n 2p)" "$(printf '8\t5.2\t7.0\t7.5\t0.87\t0.76\t0.83\t4\t5.0\t6.0')" \
	"medians, paired medians, and the median round's two figures (lower is better)"
# keys of two words, the figure in the second column after them; higher is better: the best of a
# round is now the larger figure (round 1: 70, 2: 110, 3: 80, 5: 80), lk/best 0.714 0.909 0.688
# 0.5, whose lower middle is round 3's 0.688 (55.0 against 80.0)
tab=$(bench_paired_table "$T/d" R 5 2 1 higher "$(printf 'c:op\tsize')" lamkit "mpich ompi" | awk -F '\t' '$1 == "bcast"')
is "$tab" "$(printf 'bcast\t8\t52.5\t70.0\t75.0\t0.87\t0.76\t0.69\t4\t55.0\t80.0')" \
	"two-word keys, higher is better: the better peer of a round is the larger figure"
# an extra column (e.g. the bare socket floor) gets a median and a paired ratio but is not a peer:
# with Open MPI the only peer and MPICH an extra, lk/best is against Open MPI alone (0.714 1.111
# 0.688 0.8: round 1's 0.714, 5.0 against 7.0), where against both it was 0.83
tab=$(bench_paired_table "$T/d" R 5 1 1 lower lat:size lamkit ompi mpich | awk -F '\t' '$1 == 8')
is "$tab" "$(printf '8\t5.2\t7.5\t7.0\t0.76\t0.87\t0.71\t4\t5.0\t7.0')" "an extra column is not a peer"
[ -s "$T/d/rounds-R1.txt" ]; ok $? "the single rounds' figures are kept"
bench_rounds_clean "$T/d" R
is "$(cd "$T/d" && ls | paste -sd ' ')" "rounds-R1.txt" "bench_rounds_clean removes the runs' outputs"
done_testing
