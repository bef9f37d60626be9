#!/bin/bash
# t0500: lamkit's own MPI library (libmpi.a, static) under lamkit mpiexec: its semantic tests
# (ordering, wildcards, truncation, datatypes, communicators, every collective, the nonblocking
# collectives, one-sided windows) and the common
# test programs, over shared memory and over TCP.
# timeout: 300
. "$(dirname "$0")/../lib/common.sh"
D=$LAMKIT_TOP/out/mpi-lamkit
[ "$LAMKIT_VARIANT" = asan ] && D=$LAMKIT_TOP/out/asan/mpi-lamkit
[ -x "$D/lk_p2p" ] || skip_all "own MPI test programs not built"
# segments of other runs on this machine come and go: only new ones that stay count
lkmpi_before=$(ls /dev/shm | grep '^lkmpi-' | sort)

for n in 1 2 3 4; do
	for p in lk_p2p lk_dtype lk_coll lk_comm lk_inter lk_cancel lk_topo lk_misc lk_ext lk_nbc lk_inbc lk_rma; do
		case $n:$p in 1:lk_p2p | 1:lk_dtype | 1:lk_inter | 1:lk_cancel) continue ;; esac # need a peer
		out=$(LKX_TIMEOUT=120 lkx -n $n "$D/$p" 2>&1); rc=$?
		is "$rc" 0 "$p -n $n exits 0"
		like "$out" "$p: OK size=$n" "$p -n $n checks pass"
	done
done
like "$(lkx -n 4 "$D/ring" 3)" "ring: OK laps=3 size=4" "ring -n 4"
like "$(lkx -n 3 "$D/collectives" 256)" "collectives: OK size=3" "collectives -n 3"
# a large message between two ranks on one node: the receiver reads chunks of it while the
# sender, idle in MPI, writes the others into the receiver's buffer; a sender that computes
# instead (600 ms, no MPI call) must not hold the receive back ("busy"), and a sender whose
# writes fail leaves the receiver to read the whole message again
# sum_field TEXT: the sum, over the ranks' stats lines, of the number after TEXT
sum_field() { sed -n "s/.*$1 \([0-9]*\).*/\1/p" | awk '{ s += $1 } END { print s + 0 }'; }
# large_stats TEXT ARGS...: `large` -n 2 with LAMKIT_TP_STATS (and the caller's environment), up
# to three runs until the ranks' TEXT sums above 0: whether an idle sender gets to help before
# the receiver has taken every chunk is a race, which a receiver running alone on a busy machine
# (a CI run of the whole suite) can win for a whole run. RUNS: how many runs there were; BAD: the
# output of the first run whose own data check did not pass (every run's data must be right,
# not only the first one's).
large_stats() {
	local text=$1 i o
	shift
	RUNS=0 BAD=''
	for i in 1 2 3; do
		o=$(LAMKIT_TP_STATS=1 LKX_TIMEOUT=120 lkx -n 2 "$D/large" "$@" 2>&1)
		RUNS=$i
		[ -n "$BAD" ] || printf '%s' "$o" | grep -q "large: OK" || BAD=$o
		[ "$(echo "$o" | sum_field "$text")" -gt 0 ] && return 0
	done
	return 1
}
large_stats 'chunks written for receivers' 8388608 busy
ok $? "large: the senders copied chunks into the receivers (LAMKIT_TP_STATS; in one of up to 3 runs)"
is "$BAD" "" "large messages 0 B .. 8 MiB copied by receiver and sender, one sender computing ($RUNS runs, each checked)"
LAMKIT_SHM_LARGE=cma-help-refused large_stats 'the sender.s;'
ok $? "large: when every write of a helping sender fails, the receivers read the messages again themselves"
is "$BAD" "" "large messages when every write of a helping sender fails ($RUNS runs, each checked)"
# where the kernel refuses the receiver's read (Yama ptrace_scope 1), the message goes by CTS and
# the pipelined copy: cma-refused makes every read fail with EPERM, as there
like "$(LAMKIT_SHM_LARGE=cma-refused LKX_TIMEOUT=120 lkx -n 2 "$D/large")" "large: OK" \
	"large messages 0 B .. 8 MiB when the kernel refuses CMA reads"
like "$(LAMKIT_SHM_LARGE=cma-refused lkx -n 3 "$D/lk_p2p" 2>&1)" "lk_p2p: OK size=3" \
	"lk_p2p -n 3 when the kernel refuses CMA reads"
# the shm eager limit: measured by the rank that makes the node's segment (a read of its own
# memory against a memcpy, tp_shm.c pick_eager), the same for every local rank; 8 KiB without
# the read; LAMKIT_SHM_EAGER sets it
eager() { LAMKIT_TP_STATS=1 lkx "$@" 2>&1 | sed -n 's/^lamkit tp: rank [0-9]* shm eager \([0-9]*\) bytes$/\1/p' | sort | uniq -c | awk '{ print $2 " x" $1 }'; }
like "$(eager -n 4 "$D/hello")" "^(8192|16384|32768) x4$" "the 4 local ranks have one eager limit, the node's"
is "$(LAMKIT_SHM_LARGE=copy eager -n 2 "$D/hello")" "8192 x2" "without the read: 8 KiB"
is "$(LAMKIT_SHM_EAGER=4096 eager -n 2 "$D/hello")" "4096 x2" "LAMKIT_SHM_EAGER sets it"
is "$(lkx -n 4 "$D/hello" | grep -c 'of 4 on')" 4 "hello -n 4"
like "$(lkx -n 3 "$D/lk_misc" 2>&1)" "MPI_COMM_SELF attributes deleted at finalize" \
	"lk_misc: MPI_COMM_SELF attribute callbacks run in MPI_Finalize"
for p in lk_p2p lk_coll lk_inter lk_cancel lk_nbc lk_inbc lk_rma; do
	like "$(LAMKIT_TP=tcp LKX_TIMEOUT=120 lkx -n 3 "$D/$p" 2>&1)" "$p: OK size=3" "$p -n 3 over TCP (LAMKIT_TP=tcp)"
done
like "$(LKX_TIMEOUT=200 lkx -n 8 "$D/lk_coll" 2>&1)" "lk_coll: OK size=8" "lk_coll -n 8 oversubscribed"
like "$(LKX_TIMEOUT=200 lkx -n 8 "$D/lk_nbc" 2>&1)" "lk_nbc: OK size=8" "lk_nbc -n 8 oversubscribed"
like "$(LKX_TIMEOUT=200 lkx -n 8 "$D/lk_rma" 2>&1)" "lk_rma: OK size=8" \
	"lk_rma -n 8 oversubscribed (spinning origins give the CPU to the lock holders)"
# windows across agents (nodes): ranks 0,1 on one, 2,3 on the other (active messages between
# them, shared memory inside each); MPI_Win_allocate_shared still needs one node
out=$(LKX_TIMEOUT=120 lkx --local-agents 2:2 -n 4 "$D/lk_rma" 2>&1); rc=$?
is "$rc" 0 "lk_rma across two nodes (mixed window) exits 0"
like "$out" "lk_rma: OK size=4" "... and its checks pass"
out=$("$D/hello" 2>&1); like "$out" "hello from rank 0 of 1" "a singleton without launcher"
is "$(lkmpi_leaked "$lkmpi_before")" "" \
	"no lkmpi shared-memory segment left"
is "$(ls "$LAMKIT_TMPDIR/lamkit-$(id -u)" 2>/dev/null)" "" "no session directory left"
done_testing
