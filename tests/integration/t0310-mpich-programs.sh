#!/bin/bash
# t0310: unmodified MPICH-built programs under lamkit mpiexec: hello, ring, collectives, large
# messages, argument/environment/cwd forwarding, 32 ranks oversubscribed.
# timeout: 300
. "$(dirname "$0")/../lib/common.sh"
need_mpich
B=$MPI_BIN/mpich

for n in 1 2 4; do
	out=$(lkx -n $n "$B/hello" | sort)
	want=$(for ((r = 0; r < n; r++)); do echo "hello from rank $r of $n on $(hostname)"; done | sort)
	is "$out" "$want" "hello -n $n: every rank reports once with the right size"
done
like "$(lkx -n 4 "$B/ring" 3)" "^ring: OK laps=3 size=4 token=12$" "ring -n 4"
like "$(lkx -n 4 "$B/collectives")" "^collectives: OK size=4 " "collectives -n 4"
like "$(lkx -n 3 "$B/collectives" 256)" "^collectives: OK size=3 " "collectives -n 3 (non power of two)"
like "$(LKX_TIMEOUT=120 lkx -n 2 "$B/large")" "large: OK" "large messages 0 B .. 8 MiB verified, -n 2"
like "$(LKX_TIMEOUT=120 lkx -n 4 "$B/large" 1048576)" "large: OK" "large messages with 4 ranks"

mkdir -p "$T/cwd"
out=$(LKT_E1='a b' lkx -n 2 -wdir "$T/cwd" -genv LKT_E2 x=y "$B/envargs" 'arg one' '' 'q"uote' --env LKT_E1 LKT_E2)
like "$out" "envargs: 1 argv\[1\]=\[arg one\]" "an argument with a space arrives whole"
like "$out" "envargs: 0 argv\[2\]=\[\]" "an empty argument arrives"
like "$out" "envargs: 1 argv\[3\]=\[q\"uote\]" "a quote arrives"
like "$out" "envargs: 0 env LKT_E1=\[a b\]" "our environment arrives"
like "$out" "envargs: 1 env LKT_E2=\[x=y\]" "-genv with '=' in the value arrives"
like "$out" "envargs: 0 cwd=\[$T/cwd\]" "-wdir arrives"

export OMPI_MCA_mpi_yield_when_idle=1
for p in hello ring collectives; do
	args=; [ $p = collectives ] && args=17
	out=$(LKX_TIMEOUT=240 lkx -n 32 "$B/$p" $args); rc=$?
	is "$rc" 0 "$p -n 32 (oversubscribed on $(nproc) cores) exits 0"
	case $p in
	hello) is "$(printf '%s\n' "$out" | grep -c 'of 32 on')" 32 "32 hellos" ;;
	ring) like "$out" "ring: OK .*size=32" "ring of 32" ;;
	collectives) like "$out" "collectives: OK size=32" "collectives on 32" ;;
	esac
done
is "$(ls "$LAMKIT_TMPDIR/lamkit-$(id -u)")" "" "no session directory left"
done_testing
