# shellcheck shell=bash
# bench/report-page.sh: part of bench/report, sourced by it in order (not run alone): the page's
# head and the helpers that write its markdown rows.
# It uses and sets bench/report's variables.

# ---------------------------------------------------------------- the page
prev=$perf/figures.tsv
cell() { if num "${1:-}"; then printf '%s' "$1"; else printf 'n/a'; fi; }
# mdrow CELL...: a markdown row; a cell "@c:X" is X when X is a number, else n/a (what cell
# prints, without a fork per cell)
mdrow() {
    local c line=''
    for c in "$@"; do
        if [[ $c == @c:* ]]; then c=${c#@c:}; num "$c" || c=n/a; fi
        line="$line| $c "
    done
    printf '%s|\n' "$line"
}
# us_op_rows BENCH LABEL KEY...: a row per "op size" KEY of BENCH's us/op:op table (lamkit,
# MPICH and Open MPI under their own launchers, lamkit against the better) and its figure
us_op_rows() {
    local b=$1 label=$2 k l m o
    shift 2
    for k in "$@"; do
        l=${TV[$b|us/op:op|$k|lamkit@lamkit]:-} m=${TV[$b|us/op:op|$k|mpich@hydra]:-} o=${TV[$b|us/op:op|$k|ompi@mpirun]:-}
        [ -n "$l$m$o" ] || continue
        bestof lower "$m" "$o"
        mdrow "${k% *}" "$(human "${k#* }")" "@c:$l" "@c:$m" "@c:$o" "$(lkratio "$l" "$BEST")"
        fig "$label: lamkit ${k% *} $(human "${k#* }") (us)" "$l" lower "$BEST"
    done
}
mdrule() { local i line=''; for ((i = 0; i < $1; i++)); do line="$line|---"; done; printf '%s|\n' "$line"; }
# lkratio LK REF: LK/REF with two decimals or n/a
lkratio() {
    local ua ub r
    if ! num "${1:-}" || ! num "${2:-}"; then echo n/a; return; fi
    micro "$1"; ua=$MICRO
    micro "$2"; ub=$MICRO
    ((ub > 0)) || { echo n/a; return; }
    r=$(((ua * 200 / ub + 1) / 2)) # hundredths, rounded
    printf '%d.%02d\n' $((r / 100)) $((r % 100))
}

# pp_section BENCH TITLE LK MPICH OMPI PLOTNAME: the ping-pong table of one transport, its
# figures and its plot data (PLOTNAME.lat.<impl>, PLOTNAME.bw.<impl>)
pp_section() {
    local b=$1 title=$2 lk=$3 mp=$4 om=$5 pn=$6 s l m o impl col c v
    echo "### $title"
    echo
    if ! have "$b"; then
        echo "n/a: $(why "$b")."
        echo
        return
    fi
    echo "Median of interleaved passes; load $(meta "$b" load_before) before, $(meta "$b" load_after) after."
    [ -z "$(fails "$b")" ] || echo "Failed runs (their column is n/a): $(fails "$b")."
    echo "Latency is half a round trip (lower is better); bandwidth is a window of 64 messages (MB = 10^6 B; higher is better); ratios are lamkit against the better of MPICH and Open MPI."
    echo
    mdrow size "lat lamkit µs" "lat MPICH" "lat Open MPI" "lat ratio" "bw lamkit MB/s" "bw MPICH" "bw Open MPI" "bw ratio"
    mdrule 9
    for s in 0 1 8 64 128 1024 8192 65536 262144 1048576 4194304; do
        l=${TV[$b|lat_us:size|$s|$lk]:-} m=${TV[$b|lat_us:size|$s|$mp]:-} o=${TV[$b|lat_us:size|$s|$om]:-}
        local bl bm bo
        bl=${TV[$b|bw_MBps:size|$s|$lk]:-} bm=${TV[$b|bw_MBps:size|$s|$mp]:-} bo=${TV[$b|bw_MBps:size|$s|$om]:-}
        [ -n "$l$m$o$bl$bm$bo" ] || continue
        mdrow "$(human "$s")" "@c:$l" "@c:$m" "@c:$o" "$(lkratio "$l" "$(better lower "$m" "$o")")" \
            "@c:$bl" "@c:$bm" "@c:$bo" "$(lkratio "$bl" "$(better higher "$bm" "$bo")")"
        fig "$b: lamkit latency $(human "$s") (us)" "$l" lower "$(better lower "$m" "$o")"
        [ "$s" -ge 65536 ] && fig "$b: lamkit bandwidth $(human "$s") (MB/s)" "$bl" higher "$(better higher "$bm" "$bo")"
    done
    echo
    for impl in lamkit:"$lk" mpich:"$mp" ompi:"$om"; do
        col=${impl#*:}
        for c in lat_us:lat bw_MBps:bw; do
            for s in $(tkeys "$b" "${c%%:*}:size"); do
                [ "$s" -gt 0 ] 2>/dev/null || continue
                v=${TV[$b|${c%%:*}:size|$s|$col]:-}
                num "$v" && printf '%s %s\n' "$s" "$v"
            done >"$plots/$pn.${c#*:}.${impl%%:*}"
        done
    done
}

# paired_section BENCH: bench/pingpong-tcp's tables of short runs paired by round (bwL, latS),
# when the run has them
paired_section() {
    local b=$1 s
    num "${TV[$b|bwL_MBps:size|1048576|lk/best]:-}" || num "${TV[$b|latS_us:size|0|lk/best]:-}" || return 0
    echo "Again in short runs paired round by round (${TV[$b|bwL_MBps:size|1048576|rounds]:-} rounds of 1-4 MiB, ${TV[$b|latS_us:size|0|rounds]:-} of 0-128 B with the bare socket as well): the speed of moving data between this machine's two CPUs flips between two levels for seconds to minutes at a time, and every MPI slows down with it, though not always alike, so one MPI's full sweep can fall in the slow state and the next one's not. Each round runs every MPI once, briefly, one after the other; the figures are medians over rounds, the ratio is the median over rounds of lamkit's figure against the better peer's of the same round, and the target rows take it."
    echo
    mdrow size "lamkit" "MPICH" "Open MPI" "bare socket" "paired ratio"
    mdrule 6
    for s in 0 1 8 64 128 1048576 2097152 4194304; do
        local t=latS_us:size u=µs
        [ "$s" -lt 1048576 ] || t=bwL_MBps:size u=MB/s
        num "${TV[$b|$t|$s|lk/best]:-}" || continue
        mdrow "$(human "$s") ($u)" "@c:${TV[$b|$t|$s|lamkit]:-}" "@c:${TV[$b|$t|$s|mpich]:-}" \
            "@c:${TV[$b|$t|$s|ompi]:-}" "$([ $t = latS_us:size ] && cell "${TV[$b|$t|$s|floor]:-}" || echo -)" "${TV[$b|$t|$s|lk/best]:-}"
    done
    echo
}

# floor_section BENCH: bench/pingpong-tcp's floor_us:size table, when the run has one
floor_section() {
    local b=$1 s
    [ -n "$(tkeys "$b" floor_us:size)" ] || return 0
    echo "The floor of small-message latency on this path: a bare TCP ping-pong between two processes (bench/sockfloor: TCP_NODELAY, both sides spinning on recv, no MPI; its 0 B moves 1 byte), run in every pass next to the MPIs. \"want\" is what the issue's latency target asks of lamkit, 0.8 x the better peer; where want/floor is below 1 no MPI over kernel TCP can meet it."
    echo
    mdrow size "floor µs" "lamkit µs" "better peer µs" "want µs" "lamkit/floor" "want/floor"
    mdrule 7
    for s in $(tkeys "$b" floor_us:size); do
        mdrow "$(human "$s")" "@c:${TV[$b|floor_us:size|$s|floor]:-}" "@c:${TV[$b|floor_us:size|$s|lamkit]:-}" \
            "@c:${TV[$b|floor_us:size|$s|best]:-}" "@c:${TV[$b|floor_us:size|$s|want]:-}" \
            "${TV[$b|floor_us:size|$s|lk/floor]:-}" "${TV[$b|floor_us:size|$s|want/floor]:-}"
    done
    echo
}

# plot_pp: latency.png and bandwidth.png from the ping-pong sections' data
plot_pp() {
    local what=$1 ylabel=$2 png=$3 title=$4 t pn impl n=0 plot='' dt lc name
    for t in shm:1:"shared memory" tcplo:2:"tcp loopback" tcpns:3:"tcp 2 netns nodes"; do
        pn=${t%%:*} dt=$(echo "$t" | cut -d: -f2) name=${t##*:}
        for impl in lamkit:1:lamkit mpich:2:MPICH ompi:3:"Open MPI"; do
            lc=$(echo "$impl" | cut -d: -f2)
            [ -s "$plots/$pn.$what.${impl%%:*}" ] || continue
            plot="$plot${plot:+, }'$plots/$pn.$what.${impl%%:*}' using 1:2 with linespoints lc $lc dt $dt pt $((lc + 4)) ps 0.6 title '${impl##*:}, $name'"
            n=$((n + 1))
        done
    done
    [ $n -gt 0 ] || return 1
    gnuplot <<GP
set terminal pngcairo size 900,560 font ",10"
set output '$png'
set logscale xy 2
set logscale y 10
set xtics ("1 B" 1, "8 B" 8, "64 B" 64, "512 B" 512, "4 KiB" 4096, "32 KiB" 32768, "256 KiB" 262144, "2 MiB" 2097152)
set xlabel 'message size (bytes)'
set ylabel '$ylabel'
set title '$title'
set key left top box opaque
set grid
plot $plot
GP
}

have_gp=0
[ "${BENCH_REPORT_PLOTS:-1}" = 0 ] || ! command -v gnuplot >/dev/null 2>&1 || have_gp=1
{
    now=$(date -u '+%Y-%m-%d %H:%M UTC')
    echo "# lamkit performance"
    echo
    echo "Written by \`bench/report$([ $quick = 1 ] && echo ' --quick')$([ $reuse = 1 ] && echo ' --reuse')\` on $now from the benches' outputs in \`$in\`; every figure is a median of interleaved passes (lamkit, MPICH and Open MPI take turns so that load from elsewhere hits them alike), and a target row that says \"the median round of N paired ones\" comes from short runs paired round by round (each round runs every MPI once, one after the other, so that a ratio compares the MPIs in one state of the machine; the sections below say more). Regenerate with \`bench/report\` (tens of minutes) or \`bench/report --quick\`."
    echo
    echo "Machine: $(uname -n), $(nproc) CPUs ($(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)), Linux $(uname -r); lamkit $({ "$LAMKIT" version 2>/dev/null || echo '(not built)'; } | head -n 1); MPICH $(dpkg-query -W -f='${Version}' mpich 2>/dev/null || echo '?'), Open MPI $(dpkg-query -W -f='${Version}' openmpi-bin 2>/dev/null || echo '?'). Load average (1, 5, 15 min) when the page was written: $(loadavg). The load of each bench's run is in the last section and above each table; on a loaded machine absolute figures move, the ratios (measured side by side) much less."
    echo
    echo "## Targets of issues 16, 13 and 39"
    echo
    echo "lamkit's figure against the better of MPICH (Hydra) and Open MPI (mpirun) unless the row says otherwise (launch: the bare posix_spawn of N processes; boot: Hydra with the key exchange lamkit's ssh uses; spawn: \`lamkit mpiexec -n N\` of the same program); for a range of sizes the row shows the worst size. The ratio is lamkit/peer, except for output forwarding and for the times and latencies of HPCC, NetPIPE, PhyML and MrBayes (the row says \"MPICH/lamkit\"), where it is a speed (the peer's time / lamkit's), so that \"want\" reads as in the issue. A target is missed too when lamkit failed a run of its bench; the verdict says which."
    echo
    mdrow item target lamkit peer ratio want verdict
    mdrule 7
    while IFS=$'\t' read -r item name lk ref r want v reason; do
        [ "$v" = n/a ] && v="n/a: $reason"
        [ "$v" = MISSED ] && v="**MISSED**${reason:+: $reason}"
        mdrow "$item" "$name" "$lk" "$ref" "$r" "$(printf '%s' "$want" | sed 's/<=/≤ /; s/>=/≥ /')" "$v"
    done <"$targets"
    echo
    echo "$(grep -c $'\tmet\t' "$targets") met, $(grep -c $'\tMISSED\t' "$targets") missed, $(grep -c $'\tn/a\t' "$targets") n/a."
    echo
} >"$plots/head.md"
