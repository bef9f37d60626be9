# shellcheck shell=bash
# bench/report-areas.sh: part of bench/report, sourced by it in order (not run alone): the per-area
# sections: a table per bench, its figures and its plot data.
# It uses and sets bench/report's variables.

# ---------------------------------------------------------------- per-area sections
# op_section NAME TITLE TEXT: bench/outside-programs' statuses and figures as it printed them,
# and lamkit's figures at -n 2 for the regression check
op_section() {
    local b=$1 pr np fg lv n
    echo "## $2"
    echo
    if ! have "$b"; then
        echo "n/a: $(why "$b")."
        echo
        return
    fi
    n=$(sed -n 's/^# bench\/outside-programs: .* PASSES=\([0-9]*\) .*/\1/p' "$in/$b.txt" | head -n 1)
    echo "$3 Figures: the median of ${n:-the} runs (MPICH and lamkit take turns), statuses: the worst of them; lamkit/mpich > 1: lamkit has the larger figure. Load $(meta "$b" load_before) before, $(meta "$b" load_after) after."
    echo
    echo '```'
    # from the status table's header to the end of the figures table
    awk '$1 == "program" && $2 == "np" { t = 1 } t && /^#/ { exit } t' "$in/$b.txt"
    echo '```'
    echo
    while read -r pr np fg lv; do
        fig "$pr -n $np: lamkit $fg" "$lv" "$(awk -v f="$fg" -v tl="$op_timelike" 'BEGIN { print (tolower(f) ~ tl) ? "lower" : "higher" }')"
    done < <(awk "$op_plain"'
        $1 == "program" && $3 == "figure" { for (i = 1; i <= NF; i++) if ($i == "lamkit") l = i; t = 1; next }
        t && /^-+$/ { next } t && (NF == 0 || /^#/) { exit } t && l && $2 == 2 && $l ~ /^[0-9.e+-]+$/ { print $1, $2, $3, plain($l) }' "$in/$b.txt")
}
{
    echo "## Ping-pong, 2 ranks"
    echo
    pp_section pingpong "Shared memory, one host (bench/pingpong)" lamkit@lamkit mpich@hydra ompi@mpirun shm
    pp_section tcp-loopback "tcp, loopback (bench/pingpong-tcp; MPICH with UCX_TLS=tcp,self, Open MPI btl tcp)" lamkit mpich ompi tcplo
    paired_section tcp-loopback
    floor_section tcp-loopback
    pp_section tcp-netns "tcp, one rank on each of two network-namespace nodes (bench/pingpong-tcp --netns)" lamkit mpich ompi tcpns
    paired_section tcp-netns
    floor_section tcp-netns
    echo "### Streams of nonblocking messages, shared memory, one host (bench/streams)"
    echo
    if have streams; then
        echo "Windows of 64 MPI_Isend/MPI_Irecv and one MPI_Waitall, one way and both ways at once; MB/s of the median window (a window in which a rank lost its CPU to other work counts once; higher is better); load $(meta streams load_before) before, $(meta streams load_after) after. Ratios: lamkit against the better of MPICH and Open MPI."
        echo
        num "${TV[streams|bwR_MBps:size|8|lk/best]:-}" && echo "\"paired\": the ratio again from short runs paired round by round (${TV[streams|bwR_MBps:size|8|rounds]:-} rounds; each runs the three MPIs once, one after the other): the median over rounds of lamkit's figure against the better peer's of the same round, which the target rows take, since this machine's speed of moving data between its CPUs flips between two levels for seconds at a time." && echo
        mdrow size "one way lamkit" MPICH "Open MPI" ratio paired "both ways lamkit" MPICH "Open MPI" ratio paired
        mdrule 11
        for sz in 8 64 1024 4096 8192 16384 65536 262144 524288 1048576 4194304; do
            ow1=${TV[streams|bwmed_MBps:size|$sz|lamkit]:-} ow2=${TV[streams|bwmed_MBps:size|$sz|mpich]:-} ow3=${TV[streams|bwmed_MBps:size|$sz|ompi]:-}
            bw1=${TV[streams|bibwmed_MBps:size|$sz|lamkit]:-} bw2=${TV[streams|bibwmed_MBps:size|$sz|mpich]:-} bw3=${TV[streams|bibwmed_MBps:size|$sz|ompi]:-}
            [ -n "$ow1$ow2$ow3$bw1$bw2$bw3" ] || continue
            mdrow "$(human "$sz")" "@c:$ow1" "@c:$ow2" "@c:$ow3" "$(lkratio "$ow1" "$(better higher "$ow2" "$ow3")")" \
                "@c:${TV[streams|bwR_MBps:size|$sz|lk/best]:-}" \
                "@c:$bw1" "@c:$bw2" "@c:$bw3" "$(lkratio "$bw1" "$(better higher "$bw2" "$bw3")")" \
                "@c:${TV[streams|bibwR_MBps:size|$sz|lk/best]:-}"
            fig "streams: lamkit one way $(human "$sz") (MB/s)" "$ow1" higher "$(better higher "$ow2" "$ow3")"
            fig "streams: lamkit both ways $(human "$sz") (MB/s)" "$bw1" higher "$(better higher "$bw2" "$bw3")"
        done
        echo
    else
        echo "n/a: $(why streams)."
        echo
    fi
    if [ $have_gp = 1 ]; then
        plot_pp lat 'latency (µs, half round trip)' "$perf/latency.png" "2-rank ping-pong latency (lower is better)" && echo "![latency](perf/latency.png)" && echo
        plot_pp bw 'bandwidth (MB/s, window of 64)' "$perf/bandwidth.png" "2-rank bandwidth (higher is better)" && echo "![bandwidth](perf/bandwidth.png)" && echo
    fi

    echo "## Collectives, 2 ranks on one host (bench/collectives)"
    echo
    if have collectives; then
        echo "Microseconds per call, slowest rank (lower is better); load $(meta collectives load_before) before, $(meta collectives load_after) after. Across nodes: the next section."
        echo
        mdrow op size lamkit MPICH "Open MPI" "lamkit/better"
        mdrule 6
        us_op_rows collectives collectives "barrier 0" "bcast 8" "bcast 1024" "bcast 65536" "bcast 1048576" \
            "allreduce 8" "allreduce 1024" "allreduce 65536" "allreduce 1048576"
        echo
        if [ $have_gp = 1 ]; then
            for impl in lamkit@lamkit mpich@hydra ompi@mpirun; do
                for op in bcast allreduce; do
                    awk -v op="$op" -v c="$impl" '$1 == "us/op:op" { for (i = 1; i <= NF; i++) if ($i == c) k = i; t = 1; next }
                        t && /^-+$/ { next } t && (NF == 0 || /^#/) { exit }
                        t && $1 == op && $2 > 0 && $k ~ /^[0-9.]+$/ { print $2, $k }' "$in/collectives.txt" >"$plots/coll.$op.$impl"
                done
            done
            gnuplot <<GP && echo "![collectives](perf/collectives.png)" && echo
set terminal pngcairo size 900,560 font ",10"
set output '$perf/collectives.png'
set logscale x 2
set logscale y 10
set xtics ("1 B" 1, "8 B" 8, "64 B" 64, "512 B" 512, "4 KiB" 4096, "32 KiB" 32768, "256 KiB" 262144, "2 MiB" 2097152)
set xlabel 'message size (bytes)'
set ylabel 'µs per call (2 ranks, one host)'
set title 'Collectives, 2 ranks on one host (lower is better)'
set key left top box opaque
set grid
plot '$plots/coll.allreduce.lamkit@lamkit' w lp lc 1 dt 1 pt 5 ps 0.6 t 'lamkit allreduce', \
     '$plots/coll.allreduce.mpich@hydra' w lp lc 2 dt 1 pt 6 ps 0.6 t 'MPICH allreduce', \
     '$plots/coll.allreduce.ompi@mpirun' w lp lc 3 dt 1 pt 7 ps 0.6 t 'Open MPI allreduce', \
     '$plots/coll.bcast.lamkit@lamkit' w lp lc 1 dt 2 pt 5 ps 0.6 t 'lamkit bcast', \
     '$plots/coll.bcast.mpich@hydra' w lp lc 2 dt 2 pt 6 ps 0.6 t 'MPICH bcast', \
     '$plots/coll.bcast.ompi@mpirun' w lp lc 3 dt 2 pt 7 ps 0.6 t 'Open MPI bcast'
GP
        fi
    else
        echo "n/a: $(why collectives)."
        echo
    fi

    echo "## Collectives across two nodes, one rank on each (bench/collectives-netns)"
    echo
    if have coll-netns; then
        echo "Two network-namespace nodes on this host, every byte over tcp through veth and a bridge (MPICH with UCX_TLS=tcp,self, Open MPI btl tcp); one rank per node, because more ranks than this machine's 2 cores would time the scheduler. Microseconds per call, slowest rank (lower is better); load $(meta coll-netns load_before) before, $(meta coll-netns load_after) after. With several ranks per node lamkit's barrier, bcast, reduce, allreduce and allgather are node-aware: their messages between nodes are counted, not timed (tests/integration/t0527-coll-hier.sh)."
        f=$(fails coll-netns)
        [ -z "$f" ] || { echo; echo "Failed runs (their column is n/a): $f."; }
        echo
        num "${TV[coll-netns|collR_us:op|barrier 0|lk/best]:-}" && echo && echo "\"paired\": the ratio again from short runs paired round by round (${TV[coll-netns|collR_us:op|barrier 0|rounds]:-} rounds; each runs the three MPIs once, one after the other, at a quarter of the passes' length): the median over rounds of lamkit's time against the better peer's of the same round, which the target row takes, since this machine's speed of moving data between its CPUs flips between two levels for seconds at a time."
        echo
        mdrow op size lamkit MPICH "Open MPI" "lamkit/better" paired
        mdrule 7
        for op in "${coll_ops[@]}"; do
            for sz in 8 1024 65536 1048576; do
                k="$op $sz"
                [ "$op" = barrier ] && k="barrier 0"
                l=${TV[coll-netns|us/op:op|$k|lamkit]:-} m=${TV[coll-netns|us/op:op|$k|mpich]:-} o=${TV[coll-netns|us/op:op|$k|ompi]:-}
                if [ -n "$l$m$o" ]; then
                    mdrow "${k% *}" "$(human "${k#* }")" "@c:$l" "@c:$m" "@c:$o" "$(lkratio "$l" "$(better lower "$m" "$o")")" \
                        "@c:${TV[coll-netns|collR_us:op|$k|lk/best]:-}"
                    fig "collectives 2 nodes: lamkit ${k% *} $(human "${k#* }") (us)" "$l" lower "$(better lower "$m" "$o")"
                fi
                [ "$op" = barrier ] && break
            done
        done
        echo
    else
        echo "n/a: $(why coll-netns)."
        echo
    fi

    echo "## One-sided communication and overlap, 2 ranks on one host (bench/rma)"
    echo
    if have rma; then
        echo "Microseconds per operation, rank 0 (lower is better); load $(meta rma load_before) before, $(meta rma load_after) after. put/get with MPI_Win_lock + MPI_Win_flush per operation, or MPI_Win_fence; put_flush_busy: the target computes without calling MPI. iallreduce: 8192 doubles alone (ar), the computation alone, and MPI_Iallreduce with the computation and an MPI_Test every 1/16 of it (overlap; its target row is against MPICH alone)."
        f=$(fails rma)
        [ -z "$f" ] || { echo; echo "Failed runs (their column is n/a): $f."; }
        echo
        mdrow op size lamkit MPICH "Open MPI" "lamkit/better"
        mdrule 6
        us_op_rows rma rma "put_flush 8" "get_flush 8" "put_flush 1048576" "get_flush 1048576" "put_flush_busy 8" \
            "put_fence 8" "get_fence 8" "iallreduce_ar 65536" "iallreduce_compute 65536" "iallreduce_overlap 65536"
        echo
        if [ -n "$(tkeys rma MBps:op)" ]; then
            echo "Windows of MPI_Win_create (user memory, reached across processes by process_vm_readv/writev in lamkit and Open MPI alike): MB/s of a put or get with a flush per operation from rank 0 to rank 1, and of every rank putting to every other with one MPI_Win_flush_all per round; short runs paired round by round (lk/best: the median over rounds of lamkit's bandwidth against the better peer's of the same round, higher is better)."
            echo
            mdrow op size lamkit MPICH "Open MPI" "lk/best (paired)"
            mdrule 6
            for op in wc_put_flush wc_get_flush wc_put_all; do
                for sz in 65536 262144 1048576 4194304; do
                    l=${TV[rma|MBps:op|$op $sz|lamkit]:-}
                    [ -n "$l" ] || continue
                    mdrow "$op" "$(human "$sz")" "@c:$l" "@c:${TV[rma|MBps:op|$op $sz|mpich]:-}" \
                        "@c:${TV[rma|MBps:op|$op $sz|ompi]:-}" "@c:${TV[rma|MBps:op|$op $sz|lk/best]:-}"
                    fig "rma: lamkit $op $(human "$sz") (MB/s)" "$l" higher
                done
            done
            echo
        fi
    else
        echo "n/a: $(why rma)."
        echo
    fi

    echo "## Collectives with more ranks than cores (bench/collectives-ranks)"
    echo
    if have coll-ranks; then
        echo "2, 4 and 8 ranks on this host's $(nproc) cores: how each MPI waits decides these (lamkit blocks: it yields, then sleeps until a message comes; doc/PROTOCOL-mpi-wire.md section 9). Microseconds per call, slowest rank (lower is better), allgather and alltoall sizes per rank as the OSU benchmarks count them; short runs paired round by round: each MPI's median over rounds, and lk/best, the median over rounds of lamkit's time against the better peer's of the same round. Load $(meta coll-ranks load_before) before, $(meta coll-ranks load_after) after."
        echo
        for np in 2 4 8; do
            [ -n "$(tkeys coll-ranks "r${np}_us:op")" ] || continue
            echo "$np ranks:"
            echo
            mdrow op size lamkit MPICH "Open MPI" "lk/best (paired)"
            mdrule 6
            for op in barrier allgather alltoall bcast reduce allreduce; do
                for sz in 0 8 1024 65536; do
                    k="$op $sz"
                    l=${TV[coll-ranks|r${np}_us:op|$k|lamkit]:-}
                    [ -n "$l" ] || continue
                    mdrow "$op" "$(human "$sz")" "@c:$l" "@c:${TV[coll-ranks|r${np}_us:op|$k|mpich]:-}" \
                        "@c:${TV[coll-ranks|r${np}_us:op|$k|ompi]:-}" "@c:${TV[coll-ranks|r${np}_us:op|$k|lk/best]:-}"
                    fig "coll-ranks: lamkit $np ranks $op $(human "$sz") (us)" "$l" lower
                done
            done
            echo
        done
    else
        echo "n/a: $(why coll-ranks)."
        echo
    fi

    echo "## Dynamic processes (bench/spawn --mpi)"
    echo
    if have spawn; then
        echo "One parent's MPI_Comm_spawn of N children until a barrier over the intercommunicator completed (the parent's figure), against the wall time of \`lamkit mpiexec -n N\` of the same program (MPI_Init, MPI_Barrier, MPI_Finalize); milliseconds, medians of interleaved passes (lower is better); load $(meta spawn load_before) before, $(meta spawn load_after) after. Debian's MPICH 4.0 (ch4:ucx) cannot spawn, so there is no peer column; \`bench/spawn\` without --mpi times the PMI-level spawn and prints Hydra's \`-n N\` for reference."
        echo
        mdrow N "spawn ms" "mpiexec -n N ms" "spawn/mpiexec"
        mdrule 4
        for n in 1 8 32; do
            l=$(spawn_get "$n" 2) m=$(spawn_get "$n" 3)
            [ -n "$l$m" ] || continue
            mdrow "$n" "@c:$l" "@c:$m" "$(lkratio "$l" "$m")"
            fig "spawn: lamkit MPI_Comm_spawn of $n (ms)" "$l" lower "$m"
        done
        echo
    else
        echo "n/a: $(why spawn)."
        echo
    fi

    echo "## Launch"
    echo
    if have launch-cpu; then
        echo "CPU time (user+sys of the launcher and all its children) to start N copies of /bin/true (bench/launch-cpu): the stable figure on a busy machine. ref = bare posix_spawn of N processes; chan = the same with each process's stdout and stderr pipes and PMI socket, the floor of a launcher that forwards output and serves PMI. Times are medians of the runs; the ratios are medians of the ratios within a round (paired) when the bench gives them. Load $(meta launch-cpu load_before) before, $(meta launch-cpu load_after) after."
        echo
        mdrow N "ref ms" "chan ms" "lamkit ms" "Hydra ms" lamkit/ref Hydra/ref lamkit/chan
        mdrule 8
        for n in $(tkeys launch-cpu N); do
            num "$n" || continue
            r=${TV[launch-cpu|N|$n|ref_ms]:-} l=${TV[launch-cpu|N|$n|lamkit_ms]:-} h=${TV[launch-cpu|N|$n|hydra_ms]:-}
            c=${TV[launch-cpu|N|$n|chan_ms]:-} lr=${TV[launch-cpu|N|$n|lamkit/ref]:-} hr=${TV[launch-cpu|N|$n|hydra/ref]:-}
            lc=${TV[launch-cpu|N|$n|lamkit/chan]:-}
            num "${TV[launch-cpu|N|$n|med_lk]:-}" || lr=$(lkratio "$l" "$r") hr=$(lkratio "$h" "$r")
            mdrow "$n" "@c:$r" "@c:$c" "@c:$l" "@c:$h" "@c:$lr" "@c:$hr" "@c:$lc"
            printf '%s %s %s %s\n' "$n" "$r" "$l" "$h" >>"$plots/launch-cpu"
            fig "launch-cpu: lamkit -n $n (ms CPU)" "$l" lower "$r"
        done
        echo
    else
        echo "CPU time: n/a: $(why launch-cpu)."
        echo
    fi
    if have launch; then
        echo "Wall time (bench/launch), median of interleaved rounds; hello = an MPICH MPI_Init/MPI_Finalize program. Load $(meta launch load_before) before, $(meta launch load_after) after."
        echo
        mdrow case N "ref ms" "lamkit ms" "Hydra ms" lamkit/ref lamkit/Hydra
        mdrule 7
        for k in "/bin/true 1" "/bin/true 4" "/bin/true 16" "/bin/true 64" "hello 2" "hello 8" "hello 32"; do
            r=${TV[launch|case|$k|ref_ms]:-} l=${TV[launch|case|$k|lamkit_ms]:-} h=${TV[launch|case|$k|hydra_ms]:-}
            [ -n "$r$l$h" ] || continue
            mdrow "${k% *}" "${k#* }" "@c:$r" "@c:$l" "@c:$h" "$(lkratio "$l" "$r")" "$(lkratio "$l" "$h")"
            [ "${k% *}" = /bin/true ] && printf '%s %s %s %s\n' "${k#* }" "${r:-?}" "${l:-?}" "${h:-?}" >>"$plots/launch-wall"
            fig "launch: lamkit ${k% *} -n ${k#* } (ms wall)" "$l" lower "$r"
        done
        echo
    else
        echo "Wall time: n/a: $(why launch)."
        echo
    fi
    if [ $have_gp = 1 ] && { [ -s "$plots/launch-cpu" ] || [ -s "$plots/launch-wall" ]; }; then
        p=
        [ -s "$plots/launch-cpu" ] && p="'$plots/launch-cpu' u 1:2 w lp lc 4 dt 1 pt 4 t 'bare spawn, CPU', '$plots/launch-cpu' u 1:3 w lp lc 1 dt 1 pt 5 t 'lamkit, CPU', '$plots/launch-cpu' u 1:4 w lp lc 2 dt 1 pt 6 t 'Hydra, CPU'"
        [ -s "$plots/launch-wall" ] && p="$p${p:+, }'$plots/launch-wall' u 1:2 w lp lc 4 dt 2 pt 4 t 'bare spawn, wall', '$plots/launch-wall' u 1:3 w lp lc 1 dt 2 pt 5 t 'lamkit, wall', '$plots/launch-wall' u 1:4 w lp lc 2 dt 2 pt 6 t 'Hydra, wall'"
        gnuplot <<GP && echo "![launch](perf/launch.png)" && echo
set terminal pngcairo size 900,560 font ",10"
set output '$perf/launch.png'
set datafile missing '?'
set logscale xy 2
set xlabel 'N copies of /bin/true'
set title 'Launch of N copies of /bin/true: CPU time (solid), wall time (dashed); lower is better'
set ylabel 'ms'
set key left top box opaque
set grid
plot $p
GP
    fi

    echo "## Boot of a universe over ssh (bench/boot ssh)"
    echo
    if have boot; then
        echo "Seconds for \`lamkit boot\` + one /bin/true per node + \`lamkit halt\` on K network-namespace nodes with one sshd each, per boot algorithm (fanout 4, window 5; \"all at once\": windowed with a window of K, every node started from here at once as Hydra does), against \`mpiexec.hydra -launcher ssh\` running /bin/true on the same nodes, plainly and with the key exchange lamkit's ssh asks for (hydra+kex, the fair reference); \"ssh floor\" is a bare \`ssh HOST true\` to every node at once with that key exchange: on one machine every client and server shares its cores, so no ssh launcher gets below it. $(grep -m1 '^# load average' "$in/boot.txt" | sed 's/^# //'); $(grep '^# load average' "$in/boot.txt" | sed -n '2s/^# //p')."
        echo
        mdrow K linear windowed tree thread "all at once" Hydra Hydra+kex "ssh floor" "best/Hydra+kex" "floor/Hydra+kex"
        mdrule 11
        for k in $(tkeys boot K); do
            num "$k" || continue
            row=() bl=
            for c in $boot_algs hydra hydra+kex ssh-floor; do
                v=${TV[boot|K|$k|$c]:-}
                if num "$v"; then row+=("$v"); else row+=(n/a); fi
                case $c in hydra* | ssh-floor) ;; *) num "$v" && bestof lower "$bl" "$v" && bl=$BEST ;; esac
            done
            hk=${TV[boot|K|$k|hydra+kex]:-}
            mdrow "$k" "${row[@]}" "$(lkratio "$bl" "$hk")" "$(lkratio "${TV[boot|K|$k|ssh-floor]:-}" "$hk")"
            echo "$k ${row[*]}" | sed 's|n/a|?|g' >>"$plots/boot"
            fig "boot: lamkit best, $k nodes (s)" "$bl" lower "$hk"
        done
        echo
        if [ $have_gp = 1 ] && [ -s "$plots/boot" ]; then
            gnuplot <<GP && echo "![boot](perf/boot.png)" && echo
set terminal pngcairo size 900,560 font ",10"
set output '$perf/boot.png'
set datafile missing '?'
set xlabel 'ssh nodes K'
set title 'Boot over ssh of K namespace nodes + a job + halt (lower is better)'
set ylabel 's: boot + /bin/true on every node + halt'
set key left top box opaque
set grid
set yrange [0:*]
plot '$plots/boot' u 1:2 w lp lc 1 dt 1 pt 5 t 'lamkit linear', '' u 1:3 w lp lc 1 dt 2 pt 6 t 'lamkit windowed', \
     '' u 1:4 w lp lc 1 dt 3 pt 7 t 'lamkit tree', '' u 1:5 w lp lc 1 dt 4 pt 8 t 'lamkit thread', \
     '' u 1:6 w lp lc 1 dt 5 pt 4 t 'lamkit all at once', \
     '' u 1:7 w lp lc 2 dt 1 pt 9 t 'Hydra', '' u 1:8 w lp lc 2 dt 2 pt 10 t 'Hydra, same kex'
GP
        fi
    else
        echo "n/a: $(why boot)."
        echo
    fi

    echo "## Output forwarding (bench/stdio)"
    echo
    if have stdio; then
        sed -n 's/^# bench\/stdio: /Each run: /p' "$in/stdio.txt" | head -n 1
        echo
        echo "CPU ms: user+sys of the launcher, its agents or proxies and the ranks (one more run per pass; steadier than wall time on a busy machine)."
        echo
        amt=$(sed -n 's/.*: \([0-9]*\) ranks x \([0-9]*\) MB.*/\1 x \2 MB/p' "$in/stdio.txt" | head -n 1)
        mdrow output "lamkit ms" "Hydra ms" "mpirun ms" "throughput lamkit/Hydra" "lamkit CPU ms" "Hydra CPU ms" "CPU Hydra/lamkit"
        mdrule 8
        for m in lines binary; do
            l=$(ratioline stdio "stdio-$m" lamkit) h=$(ratioline stdio "stdio-$m" mpich) o=$(ratioline stdio "stdio-$m" ompi)
            lc=$(ratioline stdio "stdio-$m" lamkit_cpu) hc=$(ratioline stdio "stdio-$m" mpich_cpu)
            mdrow "$m" "@c:$l" "@c:$h" "@c:$o" "$(lkratio "$h" "$l")" "@c:$lc" "@c:$hc" "$(lkratio "$hc" "$lc")"
            # keyed by the amount: --quick writes 100 MB a rank, a full run 250
            fig "stdio: lamkit $m, $amt (ms)" "$l" lower "$h"
            fig "stdio: lamkit $m, $amt (ms CPU)" "$lc" lower "$hc"
        done
        echo
    else
        echo "n/a: $(why stdio)."
        echo
    fi

    op_section hpcc "HPC Challenge, -n 2 (bench/outside-programs hpcc)" "Every section of \`hpcc\` built with each MPI's compiler wrapper and run under its launcher; a section passes when hpccoutf.txt reports no failure."
    op_section apps "NetPIPE, PhyML and MrBayes, -n 2 (bench/outside-programs netpipe phyml mrbayes)" "NetPIPE's NPmpi: its largest bandwidth (MB/s, higher is better) and smallest one-way latency (µs) over a sweep of sizes, then a sweep that checks the data; PhyML's phyml-mpi: wall time (s) of an ML tree and its bootstrap replicates spread over the ranks, whose trees must be MPICH's; MrBayes: wall time (s) of 2 runs of 2 Metropolis-coupled chains, whose samples and trees must be MPICH's."
} >"$plots/areas.md"
