# shellcheck shell=bash
# bench/report-read.sh: part of bench/report, sourced by it in order (not run alone): reading the
# benches' outputs: their tables, run facts and figures, and the number helpers every part uses.
# It uses and sets bench/report's variables.

# ---------------------------------------------------------------- reading the outputs
# have NAME: true if NAME's output exists
have() { [ -s "$in/$1.txt" ]; }
# why NAME: the reason NAME has no figure, for an n/a
why() {
    if [ ! -e "$in/$1.txt" ]; then
        case $1 in
        tcp-netns | coll-netns | boot) echo "bench $1 not run (needs root for network namespaces)" ;;
        hpcc) echo "bench/outside-programs hpcc not run (not in --quick: it builds HPCC and runs for long)" ;;
        apps) echo "bench/outside-programs netpipe phyml mrbayes not run (not in --quick: it builds the three with each MPI)" ;;
        *) echo "bench $1 not run" ;;
        esac
    else
        echo "bench $1 gave no figure (exit $(meta "$1" rc))"
    fi
}
# fails NAME: the runs NAME reported as failed or timed out on stderr (why a column is n/a);
# bench/outside-programs says "outside-programs: WHAT failed, last lines of FILE:"
fails() {
    [ -f "$in/$1.err" ] || return 0
    grep -E '^(bench|outside-programs): .*(failed|timed out)' "$in/$1.err" |
        sed 's/^bench: //; s/^outside-programs: //; s/, last lines of .*//; s/:$//; s/(exit 124)/(exit 124: timed out)/; s/|/\\|/g' |
        head -n 5 | paste -sd ';' - | sed 's/;/; /g'
}
# meta NAME KEY: a fact about NAME's run
meta() { # without an exec: pages call it hundreds of times
    local k v
    [ -f "$in/$1.meta" ] || return 1
    while IFS= read -r k || [ -n "$k" ]; do
        [[ $k == "$2="* ]] && printf '%s\n' "${k#"$2="}"
    done <"$in/$1.meta"
    return 0
}
# metad NAME KEY: meta, or "-" when the run did not record KEY (outputs of older runs)
metad() { local v; v=$(meta "$1" "$2"); echo "${v:--}"; }

# Tables are read once into TV (TV[NAME|TITLE|KEY|COL] = value) and TK (TK[NAME|TITLE] = the
# first words of its rows), so that looking a value up costs no awk.
declare -A TV=() TK=()
# load_table NAME TITLE [SHIFT]: from NAME's output, the table whose header starts with the word
# TITLE; a row's KEY is its first word, its first two words or its first three (words split at
# blanks); only numeric cells are kept. SHIFT: how many key columns have no word in the header
# (bench_side_by_side's "us/op:op" heads the two columns op and size). A table ends at a blank
# line or a comment.
load_table() {
    local k v
    [ -f "$in/$1.txt" ] || return 0
    while IFS=$'\t' read -r k v; do
        if [ "$k" = @ ]; then TK[$1|$2]="${TK[$1|$2]:-}${TK[$1|$2]:+ }$v"; else TV[$1|$2|$k]=$v; fi
    done < <(awk -v title="$2" -v shift="${3:-0}" '
        state == 0 && $1 == title { h[1] = $1; for (i = 2; i <= NF; i++) h[i + shift] = $i; state = 1; next }
        state == 1 && /^-+$/ { next }
        state == 1 && (NF == 0 || /^#/ || /^==/) { exit }
        state == 1 { printf "@\t%s\n", $1
                     for (c = 2; c <= NF; c++) if ($c ~ /^[0-9.]+$/ && (c in h)) {
                         key = $1; for (n = 1; n <= 3 && n < c; n++) { print key "|" h[c] "\t" $c; key = key " " $(n + 1) } } }' \
        "$in/$1.txt")
}
# tget NAME TITLE KEY COL: the value in the column headed COL of the row whose first words are
# KEY, in a table loaded by load_table; nothing when there is no such value
# (most callers read ${TV[...]} themselves: a $(tget ...) is a fork)
tget() { printf '%s\n' "${TV[$1|$2|$3|$4]:-}"; }
# tkeys NAME TITLE: the first words of the rows of that table
tkeys() {
    local -a w
    read -r -a w <<<"${TK[$1|$2]:-}"
    [ ${#w[@]} -eq 0 ] || printf '%s\n' "${w[@]}"
}
for t in pingpong:lat_us:size pingpong:bw_MBps:size tcp-loopback:lat_us:size tcp-loopback:bw_MBps:size \
    tcp-loopback:bwL_MBps:size tcp-loopback:floor_us:size tcp-netns:floor_us:size \
    tcp-netns:lat_us:size tcp-netns:bw_MBps:size streams:bwmed_MBps:size streams:bibwmed_MBps:size \
    tcp-loopback:latS_us:size tcp-netns:bwL_MBps:size tcp-netns:latS_us:size streams:bwR_MBps:size \
    streams:bibwR_MBps:size launch-cpu:N launch:case boot:K; do
    load_table "${t%%:*}" "${t#*:}"
done
load_table collectives us/op:op 1
load_table coll-netns us/op:op
load_table coll-netns collR_us:op
load_table rma us/op:op 1
load_table rma MBps:op 1
for np in 2 4 8; do load_table coll-ranks "r${np}_us:op" 1; done
coll_ops=(barrier bcast reduce allreduce allgather alltoall)
coll_sizes=(8 64 512 4096 32768 262144 1048576)
# ratioline NAME KEY FIELD: a field of a "RATIO name=KEY ..." line
ratioline() {
    [ -f "$in/$1.txt" ] || return 0
    awk -v k="$2" -v f="$3" '$1 == "RATIO" { for (i = 2; i <= NF; i++) if ($i == "name=" k) hit = 1
            if (hit) { for (i = 2; i <= NF; i++) if (index($i, f "=") == 1) print substr($i, length(f) + 2); exit } }' \
        "$in/$1.txt"
}
num() { [[ ${1:-} =~ ^[0-9]+(\.[0-9]+)?$ ]]; }
# better lower|higher A B: the better of two figures, either of which may be missing
better() { bestof "$@"; printf '%s\n' "$BEST"; }
# bestof lower|higher A B: the same into BEST, without a fork (loops call it hundreds of times;
# a fork costs 1-20 ms on the VMs here)
bestof() {
    local a=${2:-} b=${3:-} ua ub
    if ! num "$a"; then BEST=$b; return; fi
    if ! num "$b"; then BEST=$a; return; fi
    micro "$a"; ua=$MICRO
    micro "$b"; ub=$MICRO
    if [ "$1" = lower ]; then ((ua <= ub)) && BEST=$a || BEST=$b; else ((ua >= ub)) && BEST=$a || BEST=$b; fi
}
# micro X: set MICRO to the decimal number X times 10^6 as an integer (no fork: the page makes
# hundreds of these comparisons)
micro() {
    local i=${1%%.*} f=
    [ "$i" = "$1" ] || f=${1#*.}
    f=${f}000000
    MICRO=$((10#${i:-0} * 1000000 + 10#${f:0:6}))
}
human() { # a byte count as 0 B, 64 B, 4 KiB, 1 MiB
    local s=$1
    if ((s >= 1048576 && s % 1048576 == 0)); then echo "$((s / 1048576)) MiB"
    elif ((s >= 1024 && s % 1024 == 0)); then echo "$((s / 1024)) KiB"
    else echo "$s B"; fi
}
