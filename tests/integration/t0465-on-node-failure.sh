#!/bin/bash
# t0465: mpiexec --on-node-failure continue on a universe of 4 fake nodes (boot module local,
# 2 slots each, the watch at 0.25 s / 1.5 s): lamkit's MPI program lk_ft runs 8 ranks, the node of
# ranks 6 and 7 fails (its agent killed, then in a second job stopped), and the 6 others go on:
# their receive from and send to a failed rank, and a barrier that needs them, return
# MPI_ERR_PROC_FAILED instead of hanging; MPIX_Comm_failure_get_acked names ranks 6 and 7; a
# token goes round the ring of the survivors; the job exits 0 with one line naming what was
# lost. PMIx ranks (tests/pmix/pmix_event) hear of the lost ranks as PMIx events. The same
# failure without the option ends the job (111).
# timeout: 90
. "$(dirname "$0")/../lib/common.sh"
D=$LAMKIT_TOP/out/mpi-lamkit
[ "$LAMKIT_VARIANT" = asan ] && D=$LAMKIT_TOP/out/asan/mpi-lamkit
[ -x "$D/lk_ft" ] || skip_all "own MPI test programs not built"
R="$LAMKIT_TMPDIR/lamkit-$(id -u)"
U="$R/universe"
mine=()
at_exit 'for p in "${mine[@]}"; do kill -CONT "$p" 2>/dev/null; done'
at_exit '[ -f "$U" ] && timeout 20 "$LAMKIT" wipe >/dev/null 2>&1'
lk() { (cd "$T" && timeout -k 5 60 "$LAMKIT" "$@"); }
pid4() { awk '$1 == "node" && $2 == 4 { print $8 }' "$U"; }
cat >"$T/s.lua" <<'EOS'
boot = "local"
watch = { interval = 0.25, timeout = 1.5 }
for i = 1, 4 do node("fake" .. i) { cpu = 2 } end
EOS
lk boot s.lua >/dev/null 2>&1; is $? 0 "boot 4 fake nodes"

# run_ft HOW [OPTION]: lk_ft on 8 ranks; once it is ready, HOW (kill or stop) fake4's agent;
# sets out and rc
run_ft() {
	local how=$1 p
	shift
	(cd "$T" && exec timeout -k 5 60 "$LAMKIT" mpiexec "$@" -n 8 "$D/lk_ft" 6,7 >"$T/ft.out" 2>&1) &
	local job=$!
	for _ in $(seq 300); do grep -q 'lk_ft: ready' "$T/ft.out" && break; sleep 0.1; done
	p=$(pid4)
	if [ "$how" = kill ]; then kill -9 "$p"; else kill -STOP "$p"; mine+=("$p"); fi
	wait $job; rc=$?
	out=$(cat "$T/ft.out")
}

run_ft kill --on-node-failure continue
is "$rc" 0 "agent killed: the survivors finish, exit 0"
like "$out" "lk_ft: OK survivors=6" "every survivor's check passed"
# the reason the link gave, if any, follows "went away" (": Connection reset by peer"); a
# loaded mpiexec may see its keepalive run out before it reads the closed link ("is down
# (exited for 1.6 s)")
gone_re='(went away(: [^;]*)?|is down \([^)]*\))'
like "$out" "the agent on fake4 $gone_re; its 2 rank\(s\) are lost \(ranks lost so far: 6,7\), the job goes on" \
	"one line names the node and the ranks lost"
[ "$rc" = 0 ] || diag "$out"
lk grow fake4 >/dev/null 2>&1; is $? 0 "grow fake4"

run_ft stop --on-node-failure continue
is "$rc" 0 "agent stopped: the survivors finish, exit 0"
like "$out" "lk_ft: OK survivors=6" "every survivor's check passed"
like "$out" "the agent on fake4 is down \((no answer|exited) .*the job goes on" "naming the cause"
[ "$rc" = 0 ] || diag "$out"
# the job gave fake4 up on its own keepalive (1.5 s without an answer); the universe's head
# declares it after its watch's timeout and a quorum's look. An agent resumed before that rejoins
# (a stall shorter than the watch's is no failure): CI resumed it as the job ended, before the
# head had declared it, once in 4 runs here (stop 44). So: until `nodes` says down, at most 20 s
# (`nodes` itself waits up to 5 s for a node that does not answer).
end=$((SECONDS + 20))
while :; do
	out=$(lk nodes 2>&1)
	printf '%s\n' "$out" | grep -Eq '^4 +fake4 .* down ' && break
	[ $SECONDS -lt $end ] || break
	sleep 0.2
done
like "$out" "4 +fake4 .* down " "the universe declares fake4 down"
p=$(pid4)
kill -CONT "$p"
wait_gone 5 "$p"
r=$?
ok $r "the stopped agent, resumed, exits (declared down)"
[ $r = 0 ] || { diag "agent $p: $(ps -o stat=,etime=,wchan= -p "$p")"; diag_agent_logs; }
lk grow fake4 >/dev/null 2>&1; is $? 0 "grow fake4"

# PMIx ranks hear of the lost ranks as PMIx events (tests/pmix/pmix_event, waiting for them)
inc=/usr/lib/x86_64-linux-gnu/pmix2/include lib=/usr/lib/x86_64-linux-gnu/pmix2/lib
if [ -f "$inc/pmix.h" ] && cc -O -o "$T/pmix_event" "$LAMKIT_TOP/tests/pmix/pmix_event.c" -I"$inc" -L"$lib" -lpmix 2>/dev/null; then
	(cd "$T" && exec timeout -k 5 60 "$LAMKIT" mpiexec --on-node-failure continue -n 8 "$T/pmix_event" --wait 10000 >"$T/ev.out" 2>&1) &
	job=$!
	for _ in $(seq 300); do grep -q 'rank 0: ready' "$T/ev.out" && break; sleep 0.1; done
	kill -9 "$(pid4)"
	wait $job; rc=$?
	out=$(cat "$T/ev.out")
	is "$rc" 0 "PMIx ranks, node lost: the job goes on and exits 0"
	is "$(printf '%s\n' "$out" | grep -cE '^pmix_event: rank [0-5]: PROC-ABORTED for rank 6 of kvs_[0-9_]+ \(exit code 137\)$')" 6 "each of the 6 survivors hears PMIX_ERR_PROC_ABORTED for lost rank 6"
	[ "$rc" = 0 ] || diag "$out"
	lk grow fake4 >/dev/null 2>&1; is $? 0 "grow fake4"
else
	ok 0 "# SKIP libpmix-dev not installed"
fi

run_ft kill
is "$rc" 111 "without the option the same failure ends the job"
like "$out" "the agent on fake4 $gone_re; job ended" "and says so"
out=$(lk mpiexec --on-node-failure maybe -n 1 true 2>&1); is $? 100 "a bad --on-node-failure value"
like "$out" "abort or continue" "names the choices"
lk halt >/dev/null 2>&1; is $? 0 "halt"
n=0
for p in $(pgrep -f -- "$D/lk_ft") $(pgrep -f -- "$T/pmix_event"); do pids_gone "$p" || n=$((n + 1)); done
is "$n" 0 "no rank left"
done_testing
