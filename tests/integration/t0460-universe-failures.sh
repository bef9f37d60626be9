#!/bin/bash
# t0460: a universe that outlives its nodes (4 namespace nodes over real ssh, booted as a launch
# tree, the watch at interval 0.25 s / timeout 2 s): kill -9 of a leaf agent and of the head
# (the tree's root: it started n3 and n4, and roots every job's fence), SIGSTOP of an agent,
# and a node cut off (its veth down), each between jobs and during a job. Every time: the job
# running ends with one line naming the node, `lamkit nodes` names the cause (exited, no
# answer, unreachable), jobs then run on the nodes left (one line names the ones down), nothing
# of the ended job is left running on the nodes up, and `grow NODE` brings the node back in
# place for the next job, also at once after a cut node's veth came back (its old agent still
# running). halt with a node down halts the rest and exits 0 naming it.
# timeout: 200
. "$(dirname "$0")/../lib/common.sh"
[ "$(id -u)" = 0 ] || skip_all "needs root (network namespaces)"
command -v sshd >/dev/null || [ -x /usr/sbin/sshd ] || skip_all "no sshd"
. "$LAMKIT_TOP/tests/lib/netns.sh"
at_exit netns_down
K=4
netns_up $K || { ok 1 "netns_up $K"; done_testing; }
R="$LAMKIT_TMPDIR/lamkit-$(id -u)"
U="$R/universe"
stopped=()
at_exit 'for p in "${stopped[@]}"; do kill -CONT "$p" 2>/dev/null; done'
at_exit '[ -f "$U" ] && timeout 30 "$LAMKIT" wipe >/dev/null 2>&1'
at_exit 'for i in 1 2 3 4; do netns_unblock n$i 2>/dev/null; done'
lk() { (cd "$T" && timeout -k 5 60 "$LAMKIT" "$@"); }
T0=$(date +%s%N)
lap() { echo "# $(((($(date +%s%N) - T0) / 1000000))) ms: $1"; }
pid_of() { awk -v n="$1" '$1 == "node" && $3 == n { print $8 }' "$U"; }
{
	echo 'boot = "ssh"; algorithm = "tree"; fanout = 2; timeout = 15'
	echo 'watch = { interval = 0.25, timeout = 2 }'
	echo "ssh = { options = { \"-F\", \"$NETNS_SSH_CONFIG\" }, verify = false }"
	echo "for i = 1, $K do node(\"n\" .. i) { cpu = 2 } end"
} >"$T/u.lua"
lkmpi_before=$(ls /dev/shm | grep '^lkmpi-' | sort)
lk boot u.lua >/dev/null 2>&1; is $? 0 "boot 4 nodes (a launch tree)"
like "$(grep '^node 4 ' "$U")" " 1$" "n4 was started by n1's agent"

# wait_down NODE CAUSE: until `nodes` says NODE is down for CAUSE (at most 8 s); the ms taken
wait_down() {
	local t0 out i
	t0=$(date +%s%N)
	# a node that went silent is declared after the watch's timeout (2 s); asked sooner,
	# nodes waits 5 s for it like for any node that does not answer
	[ "$2" = exited ] || sleep 2.2
	for i in $(seq 80); do
		out=$(lk nodes 2>/dev/null)
		printf '%s\n' "$out" | grep -Eq "^[0-9]+ +$1 .* down .* $2 since [0-9:]+$" && break
		sleep 0.1
	done
	like "$out" "[0-9]+ +$1 .* down .* $2 since [0-9:]+" "nodes: $1 down, $2, since when"
	echo "# $1 $2 seen after $((($(date +%s%N) - t0) / 1000000)) ms"
}
# jobs_on HOSTS DOWN: two jobs in a row run on exactly the nodes up, one line names the down
jobs_on() {
	local i out bad=0
	for i in 1 2; do
		out=$(lk exec hostname 2>&1) || bad=1
		[ "$(printf '%s\n' "$out" | grep -v '^lamkit' | sort | tr '\n' ' ')" = "$1" ] || bad=1
		printf '%s\n' "$out" | grep -q "$2 is down .*: placing on" || bad=1
	done
	is "$bad" 0 "two jobs in a row on $1(one line names $2)"
	[ "$bad" = 0 ] || diag "$out"
}
# start_job N: a job of N ranks that runs until ended, in the background ($job, its output)
start_job() {
	(cd "$T" && exec timeout -k 5 60 "$LAMKIT" mpiexec -n "$1" sleep 40 >"$T/job.out" 2>&1) &
	job=$!
	for _ in $(seq 100); do [ "$(lk ps 2>/dev/null | grep -c 'sleep 40')" -ge "$1" ] && break; sleep 0.1; done
	is "$(lk ps 2>/dev/null | grep -c 'sleep 40')" "$1" "a job of $1 ranks runs"
}
# job_ended NODE: the running job ended at once, exit 111, naming NODE; its ranks on the nodes
# up are gone
job_ended() {
	local t0=$(date +%s%N) rc
	wait $job; rc=$?
	echo "# the job ended $((($(date +%s%N) - t0) / 1000000)) ms after the failure"
	is "$rc" 111 "the job ends (111)"
	like "$(cat "$T/job.out")" "the agent on $1 (went away|is down)" "naming $1"
	[ "$rc" = 111 ] || diag "$(cat "$T/job.out")"
	is "$(lk ps 2>/dev/null | grep -c 'sleep 40')" 0 "no rank of it left on the nodes up"
}

# 1. a leaf agent killed between jobs
lap "1"
kill -9 "$(pid_of n4)"
wait_down n4 exited
jobs_on "n1 n2 n3 " n4

# 2. an agent stopped during a job (hung: its host still answers)
lap "2"
start_job 6
p3=$(pid_of n3)
kill -STOP "$p3"; stopped+=("$p3")
job_ended n3
wait_down n3 "no answer"
jobs_on "n1 n2 " n3

# 3. a node cut off between jobs
lap "3"
netns_block n2
wait_down n2 unreachable
out=$(lk exec hostname 2>&1)
is "$(printf '%s\n' "$out" | grep -v '^lamkit' | tr '\n' ' ')" "n1 " "a job on the one node left"
out=$(lk mpiexec -hosts n2 hostname 2>&1); rc=$?
is "$rc" 100 "-hosts naming a node down is an error"
like "$out" "-hosts names n2, which is down \(unreachable since" "naming it and why"

# back: n2's agent hears it was declared down and exits; grow brings all three back in place
lap "back"
p2=$(pid_of n2)
netns_unblock n2
wait_gone 10 "$p2"; ok $? "n2's old agent, reconnected, exits (it was declared down)"
for n in n2 n3 n4; do
	out=$(lk grow "$n" 2>&1); rc=$?
	is "$rc" 0 "grow $n: back in place"
	[ "$rc" = 0 ] || diag "$out"
done
ok "$(pids_gone "$p3"; echo $?)" "grow n3 ended the stopped agent"
out=$(lk exec hostname 2>&1)
is "$(printf '%s\n' "$out" | sort | tr '\n' ' ')" "n1 n2 n3 n4 " "the next job uses every node"
is "$(lk nodes 2>/dev/null | grep -c ' up ')" 4 "nodes: 4 up"

# 4. the head (the launch tree's root, every job's fence root) killed during a job
lap "4"
start_job 8
kill -9 "$(pid_of n1)"
job_ended n1
wait_down n1 exited
jobs_on "n2 n3 n4 " n1

# 5. a node cut off during a job
lap "5"
start_job 6
p4=$(pid_of n4)
netns_block n4
job_ended n4
wait_down n4 unreachable
jobs_on "n2 n3 " n4
# back at once: its veth up and `grow n4` straight away, while its old agent, cut off, may still
# run, leading a view of its own where n4 is up: grow asks the other nodes whether n4 is down,
# the new agent ends the old one before it starts, and finds the head on its first tries
netns_unblock n4
pids_gone "$p4" && old=gone || old=running
out=$(lk grow n4 2>&1); rc=$?
is "$rc" 0 "grow n4 right after its veth came back (its old agent $old then): back in place"
[ "$rc" = 0 ] || diag "$out"
ok "$(pids_gone "$p4"; echo $?)" "n4's old agent was ended"
# grow returns once the new agent found the head: up at once, for `nodes` and for the next job
like "$(lk nodes 2>/dev/null | grep -E '^[0-9]+ +n4 ')" " up " "nodes: n4 up again, as grow returns"
p4=$(pid_of n4)

# 6. the new head stopped between jobs
lap "6"
p2=$(pid_of n2)
kill -STOP "$p2"; stopped+=("$p2")
wait_down n2 "no answer"
out=$(lk exec hostname 2>&1)
is "$(printf '%s\n' "$out" | grep -v '^lamkit' | sort | tr '\n' ' ')" "n3 n4 " "a job on the nodes left"
[ "$(printf '%s\n' "$out" | grep -v '^lamkit' | sort | tr '\n' ' ')" = "n3 n4 " ] || diag "$out"

# halt with nodes down: the rest halts, exit 0, a line names them
lap "halt with"
p3=$(pid_of n3)
out=$(lk halt 2>&1); rc=$?
is "$rc" 0 "halt with two nodes down exits 0"
like "$out" "2 node\(s\) were down: n1 \(exited since [0-9:]+\), n2 \(no answer since [0-9:]+\)" \
	"naming each and why"
wait_gone 5 "$p3" "$p4"; ok $? "the nodes up halted"
is "$(ls "$R" 2>/dev/null | grep -c '^universe$')" 0 "the universe is forgotten"
# what is left is the agent of the node down (its universe is gone: wipe's, or ours here)
kill -9 "$p2" 2>/dev/null
wait_gone 5 "$p2"
n=0
for p in $(pgrep -f -- "$LAMKIT_TMPDIR"); do pids_gone "$p" || n=$((n + 1)); done
is "$n" 0 "nothing of the universe left running"
# and what they left is wipe's, as halt said: their jobs' node segments among it
lk wipe u.lua >/dev/null 2>&1; is $? 0 "wipe after the halt with nodes down"
is "$(lkmpi_leaked "$lkmpi_before")" "" "no lamkit MPI segment left in /dev/shm"
done_testing
