#!/bin/bash
# t0370: how lamkit's MPI waits. Oversubscribed (more ranks than CPUs) or told to
# (LAMKIT_WAIT=block, mpiexec --wait block), a rank blocked in MPI_Recv, MPI_Wait, a collective,
# MPI_Win_fence, MPI_Win_lock or an MPI_Send that waits for room in a full node ring while
# another computes for a second uses under 1 % of a CPU:
# it sleeps on a doorbell (a futex in the node segment; poll() with tcp peers; the RMA progress
# thread's sockets; udp's timers bound it), measured by each rank over its own wait (getrusage,
# every thread). A
# stress of the doorbells: many messages of random sizes in random patterns (shifts, gathers
# with wildcards, storms of Isends, collectives, one rank late, floods of small messages to a
# late rank) on more ranks than CPUs, every
# payload checked, a watchdog that names where a rank hangs; again with the smallest node rings,
# where senders sleep until their receiver hands room back. Blocking ranks share their
# agent's session (one scheduling group, so that yielding helps); spinning ones have their own.
# --wait with a bad mode is a usage error. The long stress (10^6 messages) is bench/wait-stress.
# timeout: 180
. "$(dirname "$0")/../lib/common.sh"
D=$LAMKIT_TOP/out/mpi-lamkit
[ "$LAMKIT_VARIANT" = asan ] && D=$LAMKIT_TOP/out/asan/mpi-lamkit
[ -x "$D/lk_wait" ] || skip_all "own MPI test programs not built"
export LKX_TIMEOUT=90
ncpu=$(nproc)
over=$((ncpu + 2))

# check_idle TAG OUT RC NRANKS NOPS: NRANKS-1 waiting ranks report each of NOPS waits of about
# a second, each with less than 1 % of its wall time in CPU, and the checks passed
check_idle() {
	local tag=$1 out=$2 rc=$3 want=$((($4 - 1) * $5)) lines bad
	lines=$(printf '%s\n' "$out" | grep -c '^lk_wait: rank [0-9]* op=[a-z]* wall_ms=[0-9]* cpu_ms=')
	is "$rc $lines" "0 $want" "$tag: every waiting rank reports each wait"
	bad=$(printf '%s\n' "$out" | awk '/^lk_wait: rank/ { split($5, w, "="); split($6, c, "=");
		if (w[2] < 900 || c[2] > w[2] / 100) print }')
	is "$bad" "" "$tag: each wait of ~1 s cost its rank < 1 % CPU"
	like "$out" "lk_wait: OK size=$4" "$tag: every value arrived"
	[ -z "$bad" ] || diag "$out"
}

out=$(lkx -n $over "$D/lk_wait" idle 1000 recv,wait,barrier 2>&1); rc=$?
check_idle "-n $over on $ncpu CPUs (auto)" "$out" $rc $over 3
out=$(lkx --wait block -n 2 "$D/lk_wait" idle 1000 allreduce,lock 2>&1); rc=$?
check_idle "--wait block -n 2" "$out" $rc 2 2
out=$(LAMKIT_SHM_RING=16384 lkx --wait block -n 3 "$D/lk_wait" idle 1000 send 2>&1); rc=$?
check_idle "--wait block, MPI_Send waiting for room in a full node ring" "$out" $rc 3 1
out=$(LAMKIT_WAIT=block lkx --local-agents 2 --map-by node -n 4 "$D/lk_wait" idle 1000 recv,fence 2>&1); rc=$?
check_idle "LAMKIT_WAIT=block, two agents (tcp, RMA progress thread)" "$out" $rc 4 2
out=$(lkx --wait block --tp shm+tcp,udp --local-agents 2 --map-by node -n 4 "$D/lk_wait" idle 1000 barrier,lock 2>&1); rc=$?
check_idle "--wait block, two agents over tcp and udp (multipath, udp timers)" "$out" $rc 4 2

# the stress: every message checked, no lost wake-up left a rank asleep (a watchdog would say
# where), and the ranks did sleep and ring
out=$(LAMKIT_TP_STATS=1 LK_WAIT_WATCHDOG=60 lkx --wait block -n 8 "$D/lk_wait" stress 300 12345 65536 2>&1); rc=$?
like "$out" "lk_wait: stress rounds=300 messages=[0-9]+" "stress: 300 rounds of random patterns on 8 ranks, $ncpu CPUs"
is "$rc $(printf '%s\n' "$out" | grep -c 'lk_wait: OK size=8')" "0 1" "stress: every message arrived whole"
is "$(printf '%s\n' "$out" | grep -c 'watchdog')" 0 "stress: no rank hung"
slept=$(printf '%s\n' "$out" | sed -n 's/.*rank [0-9]* slept \([0-9]*\) times.*rang \([0-9]*\) doorbells/\1 \2/p' |
	awk '{ s += $1; r += $2 } END { print (s > 0 && r > 0) ? "yes" : "no" }')
is "$slept" yes "stress: the ranks slept and rang doorbells"
[ "$rc" = 0 ] || diag "$out"
# the same with the smallest node rings: the floods fill them, and a sender sleeps until its
# receiver hands room back (the room doorbell); no sleep ran to its bound with a record or room
# waiting (a lost wake-up)
out=$(LAMKIT_SHM_RING=16384 LAMKIT_TP_STATS=1 LK_WAIT_WATCHDOG=60 lkx --wait block -n 8 "$D/lk_wait" stress 200 777 65536 2>&1); rc=$?
is "$rc $(printf '%s\n' "$out" | grep -c 'lk_wait: OK size=8') $(printf '%s\n' "$out" | grep -c 'watchdog')" "0 1 0" \
	"stress, 16 KiB rings: every message arrived whole, no rank hung"
counts=$(printf '%s\n' "$out" | sed -n 's/.*rank [0-9]* slept [0-9]* times ([0-9]* ran to the timeout, \([0-9]*\) of them[^;]*; \([0-9]*\) waiting for ring room.*/\1 \2/p' |
	awk '{ l += $1; r += $2 } END { print l + 0, (r > 0 ? "yes" : "no") }')
is "$counts" "0 yes" "stress, 16 KiB rings: senders slept waiting for room, no wake-up was lost"
[ "$rc" = 0 ] || diag "$out"

# sessions: blocking ranks share the agent's (one autogroup), spinning ones have their own
if [ "$(cat /proc/sys/kernel/sched_autogroup_enabled 2>/dev/null)" = 1 ]; then
	groups() { lkx "$@" sh -c 'cut -d" " -f1 /proc/self/autogroup' 2>&1 | sort -u | wc -l; }
	is "$(groups -n 3 --wait block)" 1 "blocking ranks share one scheduling group"
	is "$(groups -n 2 --wait spin)" 2 "spinning ranks have one each"
else
	ok 0 "# SKIP the kernel's autogroup is off"
	ok 0 "# SKIP the kernel's autogroup is off"
fi
is "$(lkx -n 1 sh -c 'echo $LAMKIT_OVERSUBSCRIBED') $(lkx -n $over sh -c 'echo $LAMKIT_OVERSUBSCRIBED' | sort -u)" \
	"0 1" "ranks learn whether their node is oversubscribed"
err=$(lkx --wait sometimes -n 1 true 2>&1); rc=$?
is "$rc" 100 "--wait with an unknown mode is a usage error"
like "$err" "--wait: auto, block or spin, not 'sometimes'" "... which names the modes"
done_testing
