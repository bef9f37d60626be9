# shellcheck shell=bash
# bench/report-targets.sh: part of bench/report, sourced by it in order (not run alone): the targets
# of issues 16, 13 and 39: one row each, with its verdict.
# It uses and sets bench/report's variables.

# ---------------------------------------------------------------- targets of issue 16
targets=$(mktemp "${TMPDIR:-/tmp}/bench-report.XXXXXX") || exit 1
figs=$(mktemp "${TMPDIR:-/tmp}/bench-report.XXXXXX") || exit 1
plots=$(mktemp -d "${TMPDIR:-/tmp}/bench-report.XXXXXX") || exit 1
trap 'rm -rf "$targets" "$figs" "$plots"' EXIT
: >"$plots/regressed"

# fig KEY VALUE lower|higher [PEER]: one figure for figures.tsv (the regression check); PEER:
# the reference it is set against in the same run (the better peer, the bare spawn, ...)
fig() {
    num "$2" || return 0
    local ref=''
    ! num "${4:-}" || ref=$'\t'$4
    printf '%s\t%s\t%s%s\n' "$1" "$2" "$3" "$ref" >>"$figs"
}

# target ITEM NAME WANT LK REF KIND REASON NOTE [FAILED]: one row. WANT is "<=X" (ratio LK/REF,
# lower is better) or ">=X" (ratio LK/REF for higher-is-better figures; REF/LK when KIND is "time":
# LK and REF are times and the target is on throughput). REASON explains an n/a; NOTE is shown
# after the name (which size was worst, which algorithm) but is not part of the figure's key.
# FAILED: what of lamkit's failed in that bench: the target is missed whatever the ratio of the
# figures that were measured, and FAILED says why. BEYOND: why the target is out of any MPI's
# reach here (shown with a miss).
target() {
    local item=$1 name=$2 want=$3 lk=${4:-} ref=${5:-} kind=${6:-} reason=${7:-} note=${8:-} failed=${9:-} beyond=${10:-} r v
    if num "$lk" && num "$ref" && [ "$(awk -v a="$lk" -v b="$ref" 'BEGIN { print (a > 0 && b > 0) }')" = 1 ]; then
        if [ "$kind" = time ]; then r=$(bench_ratio "$ref" "$lk"); else r=$(bench_ratio "$lk" "$ref"); fi
        v=$(awk -v r="$r" -v w="$want" 'BEGIN { x = substr(w, 3) + 0
            ok = (substr(w, 1, 1) == "<") ? (r + 0 <= x) : (r + 0 >= x); print ok ? "met" : "MISSED" }')
        reason=
    else
        r=n/a v=n/a
        [ -n "$reason" ] || reason="no figure"
    fi
    [ -z "$failed" ] || v=MISSED reason=$failed
    [ "$v" != MISSED ] || [ -n "$failed" ] || [ -z "$beyond" ] || reason=$beyond
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$item" "$name${note:+ ($note)}" "${lk:--}" "${ref:--}" "$r" "$want" "$v" "$reason" >>"$targets"
    [ "$r" != n/a ] && fig "target: $name" "$r" "$([ "${want:0:1}" = "<" ] && echo lower || echo higher)"
    return 0
}

# keyname KEY: a table key as the page names it: "4 KiB", or "allgather 1 MiB" for "OP SIZE"
keyname() { if [[ $1 == *" "* ]]; then echo "${1% *} $(human "${1#* }")"; else human "$1"; fi; }

# range_target ITEM NAME WANT BENCH TITLE LKCOL "PEERCOLS" lower|higher KEYS...: the worst ratio
# over KEYS (sizes, or "op size") of lamkit's column against the better of the peers' columns,
# as one row naming the key where it was worst. With FLOOR set (the title of a table with a column "floor", e.g.
# bench/pingpong-tcp's floor_us:size: what no MPI on that path gets below), the row names the
# floor at that size, and a miss whose wanted figure (WANT x the peer's) is below it says so.
range_target() {
    local item=$1 name=$2 want=$3 b=$4 title=$5 lkc=$6 peers=$7 dir=$8 s l p ref worst='' wl='' wr='' ws='' r fl beyond='' note w
    shift 8
    if ! have "$b"; then
        target "$item" "$name" "$want" "" "" "" "$(why "$b")"
        return
    fi
    for s in "$@"; do
        l=${TV[$b|$title|$s|$lkc]:-}
        ref=
        for p in $peers; do bestof "$dir" "$ref" "${TV[$b|$title|$s|$p]:-}"; ref=$BEST; done
        if ! num "$l" || ! num "$ref"; then continue; fi
        # the ratio in ten-thousandths, without a fork (micro: integers)
        micro "$ref"; ((MICRO > 0)) || continue
        r=$MICRO; micro "$l"; r=$((MICRO * 10000 / r))
        # worst: the highest ratio for lower-is-better figures, the lowest otherwise
        if [ -z "$worst" ] || { [ "$dir" = lower ] && ((r > worst)); } || { [ "$dir" != lower ] && ((r < worst)); }; then
            worst=$r wl=$l wr=$ref ws=$s
        fi
    done
    if [ -z "$worst" ]; then
        target "$item" "$name" "$want" "" "" "" "$b: no figure for $lkc and its peers at these sizes"
    else
        note="worst: $(keyname "$ws")"
        fl=
        [ -z "${FLOOR:-}" ] || fl=${TV[$b|$FLOOR|$ws|floor]:-}
        if num "$fl"; then
            note="$note; bare socket $fl"
            # the figure the target asks of lamkit, when it is below the floor
            w=$(awk -v x="${want:2}" -v r="$wr" -v f="$fl" 'BEGIN { if (x * r < f) printf "%.3f", x * r }')
            [ -z "$w" ] || beyond="${want:2} x the peer's $wr is $w, below the bare socket's $fl (bench/sockfloor)"
        fi
        target "$item" "$name" "$want" "$wl" "$wr" "" "" "$note" "" "$beyond"
    fi
}

# paired_target ITEM NAME WANT BENCH TITLE lower|higher KEYS...: like range_target, from a table of
# short runs paired round by round (lib.sh, bench_paired_table: lk/best is the median over rounds
# of lamkit's figure against the better peer's of the same round, med_lk and med_best the two
# figures of that median round): the worst lk/best over KEYS, as a row showing med_lk and med_best,
# so that its ratio is that paired median. With FLOOR set (the title of a paired table with the
# columns "floor" and "lk/floor" per key, as bench/pingpong-tcp's latS) the row names the floor
# at that key, lamkit's paired ratio to it and the ratio the target asks (WANT x lk/floor /
# lk/best), and a miss whose target is below the floor says so. Nothing (status 1) when the table
# is not there (an older output): the caller falls back to range_target.
paired_target() {
    local item=$1 name=$2 want=$3 b=$4 title=$5 dir=$6 k r l worst='' wl='' wr='' wk='' fl lf note w beyond=''
    shift 6
    for k in "$@"; do
        r=${TV[$b|$title|$k|lk/best]:-} l=${TV[$b|$title|$k|med_lk]:-}
        if ! num "$r" || ! num "$l"; then continue; fi
        if [ -z "$worst" ] || awk -v r="$r" -v w="$worst" -v d="$dir" 'BEGIN { exit !((d == "lower") ? r > w : r < w) }'; then
            worst=$r wk=$k wl=$l wr=${TV[$b|$title|$k|med_best]:-}
        fi
    done
    [ -n "$worst" ] || return 1
    note="worst: $(keyname "$wk"); the median round of ${TV[$b|$title|$wk|rounds]:-} paired ones"
    # the floor, paired too: lk/floor over lk/best is the better peer's figure against the bare
    # socket's of the same rounds, so WANT times that is what the target asks against the socket
    fl='' lf=''
    [ -z "${FLOOR:-}" ] || { fl=${TV[$b|$FLOOR|$wk|floor]:-} lf=${TV[$b|$FLOOR|$wk|lk/floor]:-}; }
    if num "$fl" && num "$lf"; then
        w=$(awk -v x="${want:2}" -v lf="$lf" -v lb="$worst" 'BEGIN { printf "%.2f", x * lf / lb }')
        note="$note; bare socket $fl, lamkit ${lf}x it, the target ${w}x"
        awk -v w="$w" 'BEGIN { exit !(w < 1) }' &&
            beyond="${want:2} x the peer is ${w} x the bare socket (paired by round): below it (bench/sockfloor)"
    fi
    target "$item" "$name" "$want" "$wl" "$wr" "" "" "$note" "" "$beyond"
}

small=(0 1 2 4 8 16 32 64)
for m in loopback netns; do
    b=tcp-$m nm="tcp loopback"
    [ $m = netns ] && nm="tcp 2 netns nodes"
    paired_target 1 "$nm: bandwidth 1-4 MiB, MB/s" ">=1.0" "$b" bwL_MBps:size higher 1048576 2097152 4194304 ||
        range_target 1 "$nm: bandwidth 1-4 MiB, MB/s" ">=1.0" "$b" bw_MBps:size lamkit "mpich ompi" higher 1048576 2097152 4194304
    FLOOR=latS_us:size paired_target 1 "$nm: latency 0-128 B, µs" "<=0.8" "$b" latS_us:size lower "${small[@]}" 128 ||
        FLOOR=floor_us:size range_target 1 "$nm: latency 0-128 B, µs" "<=0.8" "$b" lat_us:size lamkit "mpich ompi" lower "${small[@]}" 128
done

# item 2: the sections of HPCC, the figures of NetPIPE, PhyML and MrBayes at -n 2 against MPICH.
# bench/outside-programs prints a status table headed "program np test <flavours>" and a figures
# table headed "program np figure <flavours> <ratios>"; a test's name may have blanks, so a
# flavour's column is counted from the end of the row.
# op_timelike: the figures where lower is better (times and latencies); the rest are higher-better
op_timelike='(latency|time|wall|_s$|usec$)'
# op_fails NAME PROGRAM...: lamkit's statuses at -n 2 other than ok ("-": that test has no row
# for lamkit, e.g. the tree comparison after a failed run, which is reported itself), as
# "program -n 2 test: status; ..."
op_fails() {
    local b=$1
    shift
    [ -f "$in/$b.txt" ] || return 0
    awk -v progs=" $* " '$1 == "program" && $3 == "test" { for (i = 4; i <= NF; i++) if ($i == "lamkit") off = NF - i; nfl = NF - 3; t = 1; next }
        t && /^-+$/ { next }
        t && (NF == 0 || /^#/) { exit }
        t && off != "" && $2 == 2 && index(progs, " " $1 " ") && $(NF - off) != "-" && $(NF - off) !~ /ok$/ {
            tn = $3; for (i = 4; i <= NF - nfl; i++) tn = tn " " $i
            printf "%s%s -n 2 %s: %s", (n++ ? "; " : ""), $1, tn, $(NF - off) }
        END { if (n) print "" }' "$in/$b.txt"
}
# op_plain: an awk function that writes a figure as plain decimals: outside-programs' medians
# are %.4g, which is 1.068e+04 from 10000 up, and the page's arithmetic takes digits and a point
op_plain='function plain(x,  s) { s = sprintf("%.6f", x); sub(/0+$/, "", s); sub(/\.$/, "", s); return s }'
# op_worst NAME PROGRAM...: two lines: lamkit's worst figure at -n 2 against MPICH as "program
# figure lamkit mpich time|higher" (time: lower is better, so the ratio is MPICH/lamkit, a speed,
# and "want >= 0.9" reads the same for every figure), or "-" when there is none; then the
# PROGRAMs with no figure of both
op_worst() {
    local b=$1
    shift
    awk -v progs="$*" -v tl="$op_timelike" "$op_plain"'
        $1 == "program" && $3 == "figure" { for (i = 1; i <= NF; i++) { if ($i == "lamkit") l = i; if ($i == "mpich") m = i }; t = 1; next }
        t && /^-+$/ { next }
        t && (NF == 0 || /^#/) { exit }
        t && l && m && $2 == 2 && $l ~ /^[0-9.e+-]+$/ && $m ~ /^[0-9.e+-]+$/ && $l > 0 && $m > 0 {
            paired[$1] = 1
            tm = (tolower($3) ~ tl)
            p = tm ? $m / $l : $l / $m
            if (w == "" || p < w) { w = p; line = $1 " " $3 " " plain($l) " " plain($m) " " (tm ? "time" : "higher") } }
        END { print (w == "" ? "-" : line)
              n = split(progs, pr, " "); u = ""; for (i = 1; i <= n; i++) if (!(pr[i] in paired)) u = u (u == "" ? "" : " ") pr[i]
              print u }' "$in/$b.txt"
}
# op_target ITEM NAME BENCH PROGRAM...: the row of the worst figure of PROGRAMs against MPICH
op_target() {
    local item=$1 name=$2 b=$3 pr fg lv mv kind unp f note=
    shift 3
    if ! have "$b"; then
        target "$item" "$name" ">=0.9" "" "" "" "$(why "$b")"
        return
    fi
    f=$(op_fails "$b" "$@")
    { read -r pr fg lv mv kind; read -r unp; } < <(op_worst "$b" "$@")
    if [ "$pr" != - ]; then
        # the program is named when there are several; the ratio's direction when it is a speed
        note="worst: $([ $# -gt 1 ] && printf '%s ' "$pr")$fg$([ "$kind" = time ] && printf ', MPICH/lamkit')"
        [ -z "$unp" ] || note="$note; no lamkit and MPICH figures of $unp"
    else
        lv='' mv='' kind=''
    fi
    [ "$kind" = time ] || kind=
    target "$item" "$name" ">=0.9" "$lv" "$mv" "$kind" "$(why "$b")" "$note" "${f:+lamkit failed: $f}"
}
op_target 2 "HPCC -n 2: every section vs MPICH" hpcc hpcc
op_target 2 "NetPIPE, PhyML, MrBayes: no section below MPICH" apps netpipe phyml mrbayes

# item 3: collectives across two namespace nodes, one rank on each (bench/collectives-netns):
# the worst ratio over every collective and size against the better of MPICH and Open MPI
c3name="Allreduce, Bcast, Reduce, Allgather, Alltoall, Barrier across 2 nodes, 8 B-1 MiB, µs"
c3keys=("barrier 0")
for op in "${coll_ops[@]}"; do
    [ "$op" = barrier ] && continue
    for sz in "${coll_sizes[@]}"; do c3keys+=("$op $sz"); done
done
paired_target 3 "$c3name" "<=1.0" coll-netns collR_us:op lower "${c3keys[@]}" ||
    range_target 3 "$c3name" "<=1.0" coll-netns us/op:op lamkit "mpich ompi" lower "${c3keys[@]}"

# item 4: boot + /bin/true + halt on 16 ssh nodes against Hydra with the same key exchange
# boot_algs: bench/boot's lamkit columns (the boot section below shows them too)
boot_algs="linear windowed tree thread flat"
if have boot; then
    bl='' ba=''
    for a in $boot_algs; do
        v=${TV[boot|K|16|$a]:-}
        if num "$v" && { [ -z "$bl" ] || awk -v a="$v" -v b="$bl" 'BEGIN { exit !(a < b) }'; }; then bl=$v ba=$a; fi
    done
    # the ssh floor (a bare `ssh HOST true` to every node at once, same kex): no ssh launcher
    # gets below it, so a target below it is out of reach
    hk=${TV[boot|K|16|hydra+kex]:-} fl=${TV[boot|K|16|ssh-floor]:-} beyond='' note="lamkit's best: ${ba:-none}"
    if num "$hk" && num "$fl"; then
        note="$note; the ssh floor $fl"
        beyond=$(awk -v h="$hk" -v f="$fl" 'BEGIN { if (h > 0 && 0.8 * h < f)
            printf "0.8 x Hydra+kex is %.2f x the ssh floor: below it (no ssh launcher gets under a bare ssh to every node)", 0.8 * h / f }')
    fi
    target 4 "boot+job+halt 16 ssh nodes vs Hydra same kex, s" "<=0.8" "$bl" "$hk" "" \
        "bench/boot gave no K=16 row" "$note" "" "$beyond"
else
    target 4 "boot+job+halt 16 ssh nodes vs Hydra same kex, s" "<=0.8" "" "" "" "$(why boot)"
fi

# item 5: windowed streams (bench/streams' median-window bandwidths: a window in which a rank lost
# its CPU counts once); blocking ping-pong on shared memory
stream_sizes=()
for ((s = 8; s <= 4194304; s *= 2)); do stream_sizes+=("$s"); done
paired_target 5 "windowed Isend stream 8 B-4 MiB, one way, MB/s" ">=1.0" streams bwR_MBps:size higher "${stream_sizes[@]}" ||
    range_target 5 "windowed Isend stream 8 B-4 MiB, one way, MB/s" ">=1.0" streams bwmed_MBps:size lamkit "mpich ompi" higher "${stream_sizes[@]}"
paired_target 5 "windowed Isend stream 8 B-4 MiB, both ways, MB/s" ">=1.0" streams bibwR_MBps:size higher "${stream_sizes[@]}" ||
    range_target 5 "windowed Isend stream 8 B-4 MiB, both ways, MB/s" ">=1.0" streams bibwmed_MBps:size lamkit "mpich ompi" higher "${stream_sizes[@]}"
range_target 5 "shm ping-pong latency 0-64 B, µs" "<=0.8" pingpong lat_us:size lamkit@lamkit "mpich@hydra ompi@mpirun" lower "${small[@]}"

# item 6: output forwarding throughput (bench/stdio's RATIO lines: lamkit=ms, mpich=Hydra's ms)
for m in lines binary; do
    if have stdio; then
        target 6 "stdio $m: throughput vs Hydra, times in ms" ">=1.0" "$(ratioline stdio "stdio-$m" lamkit)" \
            "$(ratioline stdio "stdio-$m" mpich)" time "bench/stdio: no figure" \
            "$(sed -n 's/.*: \([0-9]*\) ranks x \([0-9]*\) MB.*/\1 x \2 MB/p' "$in/stdio.txt" | head -n 1)"
    else
        target 6 "stdio $m: throughput vs Hydra, times in ms" ">=1.0" "" "" "" "$(why stdio)"
    fi
done

# item 7: launch CPU time against the bare spawn limit. Paired when bench/launch-cpu gives the
# median round (med_lk, med_ref); the bare spawn with each rank's output pipes and PMI socket
# ("chan") is the floor of any launcher that has them: a target below it is out of reach.
for nw in 16:1.1 64:1.05; do
    n=${nw%:*} w=${nw#*:}
    if have launch-cpu; then
        lk=${TV[launch-cpu|N|$n|med_lk]:-} rf=${TV[launch-cpu|N|$n|med_ref]:-} note='' beyond=''
        if num "$lk" && num "$rf"; then
            note="the median round of ${TV[launch-cpu|N|$n|rounds]:-} paired ones"
            cr=${TV[launch-cpu|N|$n|chan/ref]:-} lc=${TV[launch-cpu|N|$n|lamkit/chan]:-}
            if num "$cr" && num "$lc"; then
                note="$note; with each rank's 2 output pipes and PMI socket the bare spawn takes ${cr}x, lamkit ${lc}x that"
                awk -v w="$w" -v c="$cr" 'BEGIN { exit !(w < c) }' &&
                    beyond="$w x the bare spawn is below the bare spawn with each rank's pipes and PMI socket (${cr} x, paired by round)"
            fi
        else
            lk=${TV[launch-cpu|N|$n|lamkit_ms]:-} rf=${TV[launch-cpu|N|$n|ref_ms]:-}
        fi
        target 7 "launch -n $n /bin/true: CPU time vs bare spawn, ms" "<=$w" "$lk" "$rf" "" \
            "bench/launch-cpu: no N=$n row" "$note" "" "$beyond"
    else
        target 7 "launch -n $n /bin/true: CPU time vs bare spawn, ms" "<=${nw#*:}" "" "" "" "$(why launch-cpu)"
    fi
done

# issue 13: one-sided communication on one host (bench/rma, 2 ranks) against the better of
# MPICH and Open MPI; the Iallreduce overlap against MPICH. Item "#13" keeps them apart from
# issue 16's numbered items.
# rma_get OP SIZE COL: a bench/rma figure (µs per operation)
rma_get() { tget rma us/op:op "$1 $2" "$3"; }
# rma_mbps US: 1 MiB moved in US µs, as MB/s
rma_mbps() { num "${1:-}" && awk -v t="$1" 'BEGIN { if (t > 0) printf "%.1f\n", 1048576 / t }'; }
rma_rows=("put_flush 8:put 8 B, lock + flush, µs" "get_flush 8:get 8 B, lock + flush, µs"
    "put_fence 8:put 8 B, fence, µs" "get_fence 8:get 8 B, fence, µs")
for rr in "${rma_rows[@]}"; do
    k=${rr%%:*}
    if have rma; then
        target "#13" "one-sided ${rr#*:}" "<=1.0" "$(rma_get "${k% *}" "${k#* }" lamkit@lamkit)" \
            "$(better lower "$(rma_get "${k% *}" "${k#* }" mpich@hydra)" "$(rma_get "${k% *}" "${k#* }" ompi@mpirun)")" "" "bench/rma: no $k row"
    else
        target "#13" "one-sided ${rr#*:}" "<=1.0" "" "" "" "$(why rma)"
    fi
done
for op in put get; do
    if have rma; then
        target "#13" "one-sided $op 1 MiB, lock + flush: bandwidth, MB/s" ">=1.0" \
            "$(rma_mbps "$(rma_get ${op}_flush 1048576 lamkit@lamkit)")" \
            "$(better higher "$(rma_mbps "$(rma_get ${op}_flush 1048576 mpich@hydra)")" "$(rma_mbps "$(rma_get ${op}_flush 1048576 ompi@mpirun)")")" \
            "" "bench/rma: no ${op}_flush 1048576 row"
    else
        target "#13" "one-sided $op 1 MiB, lock + flush: bandwidth, MB/s" ">=1.0" "" "" "" "$(why rma)"
    fi
done
# the overlap as the time of one MPI_Iallreduce + computation + MPI_Test round: the same
# computation in every column, so the ratio is the MPIs' own; each one's "compute alone" row is
# too short to subtract on a loaded machine
if have rma; then
    target "#13" "Iallreduce 64 KiB overlapped with compute, µs per round vs MPICH" "<=1.0" \
        "$(rma_get iallreduce_overlap 65536 lamkit@lamkit)" "$(rma_get iallreduce_overlap 65536 mpich@hydra)" "" \
        "bench/rma: no iallreduce_overlap row"
else
    target "#13" "Iallreduce 64 KiB overlapped with compute, µs per round vs MPICH" "<=1.0" "" "" "" "$(why rma)"
fi
# issue 39: the collectives at 4 ranks on this 2-core host, and one-sided bandwidth through
# MPI_Win_create windows, both from runs paired round by round
coll39=("barrier 0")
for op in bcast reduce allreduce allgather alltoall; do
    for sz in 8 1024 65536; do coll39+=("$op $sz"); done
done
paired_target "#39" "Allreduce, Bcast, Reduce, Alltoall, Allgather, Barrier at 4 ranks on $(nproc) cores, 8 B-64 KiB, µs" \
    "<=1.0" coll-ranks r4_us:op lower "${coll39[@]}" ||
    target "#39" "Allreduce, Bcast, Reduce, Alltoall, Allgather, Barrier at 4 ranks on $(nproc) cores, 8 B-64 KiB, µs" \
        "<=1.0" "" "" "" "$(if have coll-ranks; then echo "bench/collectives-ranks: no 4-rank table"; else why coll-ranks; fi)"
wc39=()
for op in wc_put_flush wc_get_flush wc_put_all; do
    for sz in 65536 262144 1048576 4194304; do wc39+=("$op $sz"); done
done
paired_target "#39" "one-sided put/get through MPI_Win_create, 64 KiB-4 MiB, MB/s" ">=1.0" rma MBps:op higher "${wc39[@]}" ||
    target "#39" "one-sided put/get through MPI_Win_create, 64 KiB-4 MiB, MB/s" ">=1.0" "" "" "" \
        "$(if have rma; then echo "bench/rma: no paired MBps table"; else why rma; fi)"
# spawn_get N COL: bench/spawn --mpi's figure for N ranks (COL 2: spawn ms, 3: mpiexec -n N ms)
spawn_get() {
    have spawn && awk -v n="$1" -v c="$2" '$1 == n && NF >= 4 && $c ~ /^[0-9.]+$/ { print $c; exit }' "$in/spawn.txt"
}
for n in 1 8 32; do
    target "#13" "MPI_Comm_spawn of $n to an intercommunicator barrier vs mpiexec -n $n, ms" "<=1.2" \
        "$(spawn_get "$n" 2)" "$(spawn_get "$n" 3)" "" "$(if have spawn; then echo "bench/spawn: no N=$n row"; else why spawn; fi)"
done
