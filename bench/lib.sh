# bench/lib.sh: shared bash helpers for the benchmarks: timing medians, ratios, tables, builds.
# shellcheck shell=bash
# Source it from a bench script: . "$(dirname "$0")/lib.sh"
# Environment: REPS (default 11), BENCH_TIMEOUT seconds per command (default 60),
# BENCH_CELL_BUDGET_MS stop repeating one measurement after this much time once 3 runs are
# done (default 20000), BENCH_OUT build directory (default /tmp/lamkit-bench-<uid>),
# LAMKIT the lamkit binary (default <repo>/out/lamkit), BENCH_PASSES rounds of each MPI benchmark
# configuration whose median is reported (default 3), BENCH_RUN_TIMEOUT per MPI run (default 600).

BENCH_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
REPS=${REPS:-11}
BENCH_TIMEOUT=${BENCH_TIMEOUT:-60}
BENCH_CELL_BUDGET_MS=${BENCH_CELL_BUDGET_MS:-20000}
BENCH_OUT=${BENCH_OUT:-${TMPDIR:-/tmp}/lamkit-bench-$(id -u)}
LAMKIT=${LAMKIT:-$BENCH_ROOT/out/lamkit}

# bench_now: set BENCH_NOW to the wall clock in microseconds (no fork with bash >= 5).
bench_now() {
    if [ -n "${EPOCHREALTIME:-}" ]; then
        local t=${EPOCHREALTIME/[.,]/}
        BENCH_NOW=$((10#$t))
    else
        BENCH_NOW=$(($(date +%s%N) / 1000))
    fi
}

# bench_median_ms REPS CMD [ARGS...]: run CMD (under timeout, output discarded) once untimed,
# then up to REPS times; print the median wall time in ms with one decimal, or "n/a" (and
# return 1) as soon as one run fails or times out (the reason goes to stderr: exit status and
# the last lines the command wrote to stderr).
bench_median_ms() {
    local reps=$1 i t0 t1 start times=() err
    shift
    err=$(mktemp "${TMPDIR:-/tmp}/bench-err.XXXXXX") || return 1
    timeout "$BENCH_TIMEOUT" "$@" </dev/null >/dev/null 2>"$err" || { bench__failed $? "$err" "$@"; return 1; }
    bench_now; start=$BENCH_NOW
    for ((i = 0; i < reps; i++)); do
        bench_now; t0=$BENCH_NOW
        timeout "$BENCH_TIMEOUT" "$@" </dev/null >/dev/null 2>"$err" || { bench__failed $? "$err" "$@"; return 1; }
        bench_now; t1=$BENCH_NOW
        times+=($((t1 - t0)))
        if ((i >= 2 && (t1 - start) / 1000 > BENCH_CELL_BUDGET_MS)); then
            break
        fi
    done
    rm -f "$err"
    printf '%s\n' "${times[@]}" | sort -n | awk '{ v[NR] = $1 }
        END { m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
              printf "%.1f\n", m / 1000 }'
}

# bench_ratio A B: print A/B with two decimals, "n/a" if either is not a positive number.
bench_ratio() {
    awk -v a="$1" -v b="$2" 'BEGIN {
        if (a !~ /^[0-9.eE+-]+$/ || b !~ /^[0-9.eE+-]+$/ || b + 0 <= 0) print "n/a"
        else printf "%.2f\n", a / b }'
}

# bench_table: read tab-separated rows on stdin (first row = header) and print them as a
# right-aligned table with a rule under the header.
bench_table() {
    awk -F '\t' '{ for (i = 1; i <= NF; i++) { c[NR, i] = $i; if (length($i) > w[i]) w[i] = length($i) }
                   if (NF > nf) nf = NF; n = NR }
        END { for (r = 1; r <= n; r++) {
                  line = ""
                  for (i = 1; i <= nf; i++) line = line sprintf("%s%*s", i > 1 ? "  " : "", w[i], c[r, i])
                  print line
                  if (r == 1) { rule = ""; for (i = 1; i <= length(line); i++) rule = rule "-"; print rule }
              } }'
}

# bench_lamkit_ok: true if $LAMKIT exists and is executable.
bench_lamkit_ok() {
    [ -x "$LAMKIT" ]
}

# bench_build_mpi SRC FLAVOUR: compile SRC with FLAVOUR's compiler (mpich, openmpi or lamkit)
# into $BENCH_OUT/FLAVOUR/<name> unless up to date; print the binary path, or return 1 quietly
# (reason on stderr) if the compiler is missing or fails.
bench_build_mpi() {
    local src=$1 fl=$2 name out cc=()
    name=$(basename "$src" .c)
    out=$BENCH_OUT/$fl/$name
    case $fl in
    mpich) cc=(mpicc.mpich) ;;
    openmpi) cc=(mpicc.openmpi) ;;
    lamkit) bench_lamkit_ok || { echo "bench: $LAMKIT not found" >&2; return 1; }
            cc=("$LAMKIT" mpicc) ;;
    *) echo "bench: unknown flavour $fl" >&2; return 1 ;;
    esac
    command -v "${cc[0]}" >/dev/null 2>&1 || { echo "bench: ${cc[0]} not found" >&2; return 1; }
    mkdir -p "$BENCH_OUT/$fl" || return 1
    # lamkit's MPI is linked in statically: a newer lamkit or MPI library means a rebuild (the
    # library changes without the launcher: lib/ next to it, or ../lib of an installed bin/)
    local lib
    lib=$(dirname "$LAMKIT")/lib/libmpi.a
    [ -f "$lib" ] || lib=$(dirname "$LAMKIT")/../lib/libmpi.a
    if [ ! -x "$out" ] || [ "$src" -nt "$out" ] ||
        { [ "$fl" = lamkit ] && { [ "$LAMKIT" -nt "$out" ] || [ "$lib" -nt "$out" ]; }; }; then
        if ! timeout 120 "${cc[@]}" -O2 -Wall -Wextra -o "$out.tmp" "$src" >"$out.log" 2>&1; then
            echo "bench: building $name with ${cc[*]} failed (see $out.log)" >&2
            rm -f "$out.tmp"
            return 1
        fi
        mv -f "$out.tmp" "$out"
    fi
    echo "$out"
}

# bench_build_c SRC: compile a plain C helper with cc into $BENCH_OUT/<name>; print its path.
bench_build_c() {
    local src=$1 out
    out=$BENCH_OUT/$(basename "$src" .c)
    mkdir -p "$BENCH_OUT" || return 1
    if [ ! -x "$out" ] || [ "$src" -nt "$out" ]; then
        timeout 120 "${CC:-cc}" -O2 -Wall -Wextra -o "$out.tmp" "$src" || return 1
        mv -f "$out.tmp" "$out"
    fi
    echo "$out"
}

# bench__failed RC ERRFILE CMD...: print "n/a", report the failure on stderr, remove ERRFILE.
bench__failed() {
    local rc=$1 err=$2
    shift 2
    echo n/a
    {
        if [ "$rc" = 124 ]; then
            echo "bench: timed out after ${BENCH_TIMEOUT}s: $*"
        else
            echo "bench: exit status $rc: $*"
        fi
        tail -n 3 "$err" | sed 's/^/bench:   /'
    } >&2
    rm -f "$err"
}

# Configurations "name:flavour:launcher" run by bench_run_configs, in table order.
BENCH_CONFIGS=(mpich@hydra:mpich:hydra mpich@lamkit:mpich:lamkit ompi@mpirun:openmpi:mpirun
    ompi@lamkit:openmpi:lamkit lamkit@lamkit:lamkit:lamkit)

# bench_launcher_cmd LAUNCHER NP: print the launch command words (one line), or return 1.
bench_launcher_cmd() {
    case $1 in
    hydra) command -v mpiexec.hydra >/dev/null 2>&1 && echo "mpiexec.hydra -n $2" ;;
    mpirun) command -v mpirun.openmpi >/dev/null 2>&1 &&
        echo "mpirun.openmpi --allow-run-as-root --oversubscribe -n $2" ;;
    lamkit) bench_lamkit_ok && echo "$LAMKIT mpiexec -n $2" ;;
    *) return 1 ;;
    esac
}

# bench_run_one NAME LAUNCH BIN NP OUT [ARGS...]: run BIN under the LAUNCH words into OUT; keep
# OUT only if the run succeeded and printed exactly one "ranks=NP " header (which catches ranks
# started as singletons). Failures are reported on stderr; returns 0 when OUT was kept.
bench_run_one() {
    local name=$1 launch=$2 bin=$3 np=$4 out=$5 rc sizes
    shift 5
    # shellcheck disable=SC2086 # the launcher command is meant to be split
    timeout "${BENCH_RUN_TIMEOUT:-600}" $launch "$bin" "$@" </dev/null >"$out.tmp" 2>"$out.err"
    rc=$?
    sizes=$(grep -o 'ranks=[0-9]*' "$out.tmp" | tr '\n' ' ')
    if [ $rc -eq 0 ] && [ "$sizes" != "ranks=$np " ]; then
        echo "bench: $name: expected one job of $np ranks, the output says: ${sizes:-nothing}" >&2
        rc=1
    fi
    if [ $rc -eq 0 ] && grep -qv '^#' "$out.tmp"; then
        mv -f "$out.tmp" "$out"
        rm -f "$out.err"
        return 0
    fi
    echo "bench: $name failed (exit $rc): $launch $bin $*" >&2
    tail -n 3 "$out.err" | sed 's/^/bench:   /' >&2
    rm -f "$out.tmp" "$out.err"
    return 1
}

# bench_median_merge FILES...: merge outputs of the same program line by line: comment lines from
# the first file, every numeric field replaced by its median over the files.
bench_median_merge() {
    awk 'FNR == 1 { nf++ }
        { line[nf, FNR] = $0; if (FNR > nl) nl = FNR }
        END {
            for (l = 1; l <= nl; l++) {
                if (line[1, l] ~ /^#/) { print line[1, l]; continue }
                n = split(line[1, l], base, " "); out = ""
                for (j = 1; j <= n; j++) {
                    k = 0
                    for (f = 1; f <= nf; f++) { split(line[f, l], w, " "); if (w[j] ~ /^-?[0-9.]+$/) v[++k] = w[j] + 0 }
                    if (base[j] !~ /^-?[0-9.]+$/ || k == 0) { out = out (j > 1 ? " " : "") base[j]; continue }
                    for (a = 2; a <= k; a++) for (b = a; b > 1 && v[b - 1] > v[b]; b--) { t = v[b]; v[b] = v[b - 1]; v[b - 1] = t }
                    m = (k % 2) ? v[(k + 1) / 2] : (v[k / 2] + v[k / 2 + 1]) / 2
                    d = index(base[j], ".") ? length(base[j]) - index(base[j], ".") : 0
                    out = out (j > 1 ? " " : "") sprintf("%." d "f", m)
                }
                print out
            } }' "$@"
}

# bench_run_configs SRC NP DIR [ARGS...]: for every entry of BENCH_CONFIGS build SRC with its
# flavour and run it with NP ranks under its launcher (timeout BENCH_RUN_TIMEOUT, default 600 s).
# BENCH_PASSES rounds (default 3) go round-robin over the configurations so that load from
# elsewhere hits all of them alike; DIR/<name>.out gets the per-field median of the passes that
# succeeded. A configuration that cannot be built or never succeeds has no .out file.
bench_run_configs() {
    local src=$1 np=$2 dir=$3 cfg name fl ln bin launch pass passes=${BENCH_PASSES:-3}
    local -A cmd=() bin_of=()
    shift 3
    mkdir -p "$dir" || return 1
    for cfg in "${BENCH_CONFIGS[@]}"; do
        IFS=: read -r name fl ln <<<"$cfg"
        rm -f "$dir/$name".*out
        launch=$(bench_launcher_cmd "$ln" "$np") || { echo "bench: $name: launcher $ln not available" >&2; continue; }
        bin=$(bench_build_mpi "$src" "$fl") || { echo "bench: $name: no $fl build" >&2; continue; }
        cmd[$name]=$launch
        bin_of[$name]=$bin
    done
    for ((pass = 1; pass <= passes; pass++)); do
        for cfg in "${BENCH_CONFIGS[@]}"; do
            name=${cfg%%:*}
            [ -n "${cmd[$name]:-}" ] || continue
            echo "bench: pass $pass/$passes: $name" >&2
            bench_run_one "$name" "${cmd[$name]}" "${bin_of[$name]}" "$np" "$dir/$name.p$pass.out" "$@" ||
                unset "cmd[$name]" # a configuration that failed once is not retried
        done
    done
    for cfg in "${BENCH_CONFIGS[@]}"; do
        name=${cfg%%:*}
        set -- "$dir/$name".p*.out
        [ -e "$1" ] && bench_median_merge "$@" >"$dir/$name.out"
    done
    return 0
}

# bench_side_by_side DIR NKEY COL TITLE: join column COL (1-based, after the NKEY key columns)
# of every DIR/<config>.out into one TSV table (header first) with a column per config and the
# ratios lamkit/hydra (MPICH), lamkit/mpirun (Open MPI), lamkit-MPI/MPICH, Open MPI/MPICH.
bench_side_by_side() {
    local dir=$1 nkey=$2 col=$3 title=$4 files=() cfg name
    for cfg in "${BENCH_CONFIGS[@]}"; do
        name=${cfg%%:*}
        files+=("$name=$dir/$name.out")
    done
    awk -v nkey="$nkey" -v col="$col" -v title="$title" -v specs="${files[*]}" '
        function v(c, k) { return ((c, k) in val) ? val[c, k] : "n/a" }
        function ratio(a, b) { return (a == "n/a" || b == "n/a" || b + 0 <= 0) ? "n/a" : sprintf("%.2f", a / b) }
        BEGIN {
            nc = split(specs, sp, " ")
            for (i = 1; i <= nc; i++) {
                split(sp[i], kv, "="); cname[i] = kv[1]; f = kv[2]
                while ((getline line < f) > 0) {
                    if (line ~ /^#/ || line ~ /^[ \t]*$/) continue
                    n = split(line, w, " "); key = w[1]
                    for (j = 2; j <= nkey; j++) key = key "\t" w[j]
                    if (!(key in seen)) { seen[key] = 1; keys[++nk] = key }
                    if (nkey + col <= n) val[i, key] = w[nkey + col]
                }
                close(f)
            }
            hdr = title
            for (j = 2; j <= nkey; j++) hdr = hdr "\t"
            for (i = 1; i <= nc; i++) hdr = hdr "\t" cname[i]
            print hdr "\tmpich:lk/hydra\tompi:lk/mpirun\tlkmpi/mpich\tompi/mpich"
            for (r = 1; r <= nk; r++) {
                k = keys[r]; line = k
                for (i = 1; i <= nc; i++) line = line "\t" v(i, k)
                line = line "\t" ratio(v(2, k), v(1, k)) "\t" ratio(v(4, k), v(3, k))
                line = line "\t" ratio(v(5, k), v(1, k)) "\t" ratio(v(3, k), v(1, k))
                print line
            }
        }'
}

# bench_time_once CMD [ARGS...]: run CMD once under timeout (no input, output discarded) and set
# BENCH_T to its wall time in microseconds; on failure report it on stderr and return 1.
# shellcheck disable=SC2034 # BENCH_T is the result
bench_time_once() {
    local t0 rc err
    err=$(mktemp "${TMPDIR:-/tmp}/bench-err.XXXXXX") || return 1
    bench_now
    t0=$BENCH_NOW
    timeout "$BENCH_TIMEOUT" "$@" </dev/null >/dev/null 2>"$err"
    rc=$?
    bench_now
    BENCH_T=$((BENCH_NOW - t0)) # read by the caller
    if [ $rc -ne 0 ]; then
        bench__failed $rc "$err" "$@" >/dev/null
        return 1
    fi
    rm -f "$err"
}

# bench_median_list US...: print the median of microsecond values in ms with one decimal, or
# "n/a" when the list is empty.
bench_median_list() {
    [ $# -gt 0 ] || { echo n/a; return; }
    printf '%s\n' "$@" | sort -n | awk '{ v[NR] = $1 }
        END { m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
              printf "%.1f\n", m / 1000 }'
}

# Short runs paired round by round. The speed of moving data between this machine's two CPUs
# flips between two levels for seconds to minutes at a time (bench/xcpu.c: about 7000 MB/s,
# then 1150; every MPI slows down with it, though not always alike), so one MPI's whole sweep
# can fall in one state and the next one's in the other, and a median over passes of each MPI alone compares states, not MPIs. A
# round runs every configuration once, briefly, one after the other: the runs of a round are
# mostly taken in one state, and the ratio inside a round compares like with like.

# bench_scale DIV [ARGS...]: the value after the last "-s" in ARGS (1 when there is none)
# divided by DIV: the scale of a bench's short runs
bench_scale() {
    local div=$1 sc=1
    shift
    while [ $# -gt 1 ]; do
        [ "$1" = -s ] && sc=$2
        shift
    done
    awk -v s="$sc" -v d="$div" 'BEGIN { print s / d }'
}

# bench_rounds DIR TAG ROUNDS NP [ARGS...]: ROUNDS rounds over the configurations in the arrays
# names, launch and exe (as the bench scripts fill them; an empty launch is skipped), each run
# into DIR/<name>.<TAG><round>.out (absent when that run failed). When the caller defines
# BENCH_ROUND_HOOK, that function is called with the round's number first (e.g. a program that
# is not an MPI, run next to them each round).
# Round r starts with the r-th configuration (round 1 with the first), the others following in
# turn: a run finds the machine as the run before it left it (the memory it freed: this guest
# hands free pages back to its host a few seconds after they are freed, and a page taken again
# after that costs a host fault; the page cache it left), so a fixed order would give one
# configuration the same predecessor in every round. Over a multiple of the configurations'
# number of rounds, each one runs in every place equally often.
# shellcheck disable=SC2154 # names, launch, exe: the caller's arrays
bench_rounds() {
    local dir=$1 tag=$2 rounds=$3 np=$4 r i j n k=${#names[@]}
    shift 4
    rm -f "$dir"/*."$tag"[0-9]*.out*
    for ((r = 1; r <= rounds; r++)); do
        [ -z "${BENCH_ROUND_HOOK:-}" ] || "$BENCH_ROUND_HOOK" "$r"
        for ((j = 0; j < k; j++)); do
            i=$(((j + r - 1) % k))
            n=${names[$i]}
            [ -n "${launch[$i]}" ] || continue
            echo "bench: $tag round $r/$rounds: $n" >&2
            bench_run_one "$n" "${launch[$i]}" "${exe[$i]}" "$np" "$dir/$n.$tag$r.out" "$@" ||
                rm -f "$dir/$n.$tag$r.out"
        done
    done
}

# bench_rounds_clean DIR TAG: remove the outputs of bench_rounds' runs
bench_rounds_clean() { rm -f "$1"/*."$2"[0-9]*.out; }

# bench_paired_table DIR TAG ROUNDS NKEY COL lower|higher TITLE LK "PEERS" ["EXTRAS"]: the table
# (TSV, header first) of the rounds bench_rounds left in DIR. A row's key is the first NKEY words
# of an output line, its figure the COL-th word after them. Columns: the key (TITLE heads the
# first; further key columns are headed by the words of TITLE after a tab), the median over
# rounds of LK, of each of PEERS and of each of EXTRAS; lk/X for every peer and extra: the median
# over rounds of LK's figure divided by X's of the same round; lk/best: the same against the
# better of the PEERS in each round (lower or higher is better, as given); rounds: how many
# rounds had LK and a peer; med_lk and med_best: LK's and the better peer's figures in the round
# whose lk/best is that median (the lower middle one of an even count), so that a row reads
# med_lk / med_best = lk/best. The figures of single rounds go to DIR/rounds-<TAG><COL>.txt;
# bench_rounds_clean removes the runs' outputs.
bench_paired_table() {
    local dir=$1 tag=$2 rounds=$3 nkey=$4 col=$5 way=$6 title=$7 lk=$8 peers=$9 extras=${10:-} c r rows
    rows=$(
        for c in $lk $peers $extras; do
            for ((r = 1; r <= rounds; r++)); do
                [ -f "$dir/$c.$tag$r.out" ] || continue
                awk -v c="$c" -v r="$r" -v nkey="$nkey" -v col="$col" '
                    !/^#/ && NF >= nkey + col && $(nkey + col) ~ /^[0-9.]+$/ {
                        k = $1; for (i = 2; i <= nkey; i++) k = k "\t" $i
                        print c "|" r "|" k "|" $(nkey + col) }' "$dir/$c.$tag$r.out"
            done
        done
    )
    # the figures of every run, for a look at single rounds: config|round|key|figure
    printf '%s\n' "$rows" >"$dir/rounds-$tag$col.txt"
    printf '%s\n' "$rows" | awk -F '|' -v rounds="$rounds" -v way="$way" -v title="$title" -v lk="$lk" \
        -v peers="$peers" -v extras="$extras" '
        function med(a, k,   i, j, t) {
            for (i = 2; i <= k; i++) for (j = i; j > 1 && a[j - 1] > a[j]; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
            return k ? ((k % 2) ? a[(k + 1) / 2] : (a[k / 2] + a[k / 2 + 1]) / 2) : "n/a"
        }
        function fmt(x, d) { return x == "n/a" ? x : sprintf("%." d "f", x) }
        NF == 4 { v[$1, $2, $3] = $4; if (!($3 in seen)) { seen[$3] = 1; key[++nk] = $3 }
                  if (index($4, ".")) { d = length($4) - index($4, "."); if (d > dig) dig = d } }
        END {
            np = split(peers, pe, " "); ne = split(extras, ex, " ")
            hdr = title "\t" lk
            for (i = 1; i <= np; i++) hdr = hdr "\t" pe[i]
            for (i = 1; i <= ne; i++) hdr = hdr "\t" ex[i]
            for (i = 1; i <= np; i++) hdr = hdr "\tlk/" pe[i]
            for (i = 1; i <= ne; i++) hdr = hdr "\tlk/" ex[i]
            print hdr "\tlk/best\trounds\tmed_lk\tmed_best"
            nc = split(lk " " peers " " extras, cf, " ")
            for (s = 1; s <= nk; s++) {
                k = key[s]; line = k
                for (c = 1; c <= nc; c++) {
                    delete a; m = 0
                    for (r = 1; r <= rounds; r++) if ((cf[c], r, k) in v) a[++m] = v[cf[c], r, k]
                    line = line "\t" fmt(med(a, m), dig)
                }
                for (c = 2; c <= nc; c++) {
                    delete a; m = 0
                    for (r = 1; r <= rounds; r++)
                        if ((lk, r, k) in v && (cf[c], r, k) in v && v[cf[c], r, k] > 0) a[++m] = v[lk, r, k] / v[cf[c], r, k]
                    line = line "\t" fmt(med(a, m), 2)
                }
                delete a; delete pl; delete pb; m = 0
                for (r = 1; r <= rounds; r++) {
                    if (!((lk, r, k) in v)) continue
                    b = ""
                    for (i = 1; i <= np; i++) if ((pe[i], r, k) in v && v[pe[i], r, k] > 0) {
                        x = v[pe[i], r, k]
                        if (b == "" || (way == "lower" ? x < b : x > b)) b = x
                    }
                    if (b == "") continue
                    a[++m] = v[lk, r, k] / b; pl[m] = v[lk, r, k]; pb[m] = b
                }
                # the median round: the one whose ratio has (m - 1) / 2 smaller ones, ties by order
                mi = 0
                for (i = 1; i <= m; i++) {
                    rk = 0
                    for (j = 1; j <= m; j++) if (a[j] < a[i] || (a[j] == a[i] && j < i)) rk++
                    if (rk == int((m - 1) / 2)) mi = i
                }
                if (mi) line = line "\t" sprintf("%.2f", a[mi]) "\t" m "\t" fmt(pl[mi], dig) "\t" fmt(pb[mi], dig)
                else line = line "\tn/a\t0\tn/a\tn/a"
                print line
            }
        }'
}
