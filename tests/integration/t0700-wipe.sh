#!/bin/bash
# t0700: `lamkit wipe` on this node after a crash: kills exactly what the session records name
# (start times checked) and what those left running, removes registered files (and the node
# segment the agent made for the job) and the session directories; -n changes nothing; a pid
# reused by an unrelated process is left alone.
# timeout: 120
. "$(dirname "$0")/../lib/common.sh"
host=$(hostname)
R="$LAMKIT_TMPDIR/lamkit-$(id -u)"
mine=() # every process this test starts or learns of, killed by pid at exit
at_exit 'for p in "${mine[@]}"; do kill -9 "$p" 2>/dev/null; done'
starttime() { awk '{print $22}' "/proc/$1/stat"; }
alive() { ! pids_gone "$1"; }

out=$("$LAMKIT" wipe 2>&1); rc=$?
is "$rc" 0 "wipe on a clean node exits 0"
is "$out" "lamkit wipe: $host: nothing to do" "and says there is nothing to do"
out=$("$LAMKIT" wipe cluster.schema 2>&1); rc=$?
ok "$([ "$rc" -ne 0 ]; echo $?)" "wipe with a schema that does not exist fails ($rc)"
like "$out" "^lamkit wipe: schema 'cluster.schema' not found \(looked in \./cluster\.schema" "and says where it looked"
is "$(printf '%s\n' "$out" | wc -l)" 1 "in one line"
"$LAMKIT" wipe -x >/dev/null 2>&1; is $? 100 "unknown option: usage error"
is "$("$LAMKIT" agent --wipe)" "wipe host=$host dry=0 killed=0 gone=0 reused=0 untrusted=0 files=0 skipped=0 dirs=0 failed=0" \
	"agent --wipe on a clean node: one machine-readable line"

# a real job whose ranks leave a child running in a new session; then mpiexec and its agent are
# SIGKILLed, so nothing cleans up (the ranks themselves die with their agent: PDEATHSIG)
mkdir -p "$T/kids"
cat >"$T/rank.sh" <<EOS
setsid sh -c 'echo \$\$ >"\$1"; exec sleep 60' sh "$T/kids/\$PMI_RANK" </dev/null >/dev/null 2>&1 &
echo ready
exec sleep 60
EOS
(cd "$T" && exec timeout -k 5 90 "$LAMKIT" mpiexec -v -n 3 sh "$T/rank.sh" >"$T/job.out" 2>"$T/job.err") &
mine+=($!)
for i in $(seq 200); do
	[ "$(grep -c ready "$T/job.out" 2>/dev/null)" = 3 ] && [ "$(ls "$T/kids" | wc -l)" = 3 ] && break
	sleep 0.05
done
agent=$(sed -n 's/^lamkit mpiexec: agent: pid \([0-9]*\) .*/\1/p' "$T/job.err")
ranks=$(sed -n 's/^lamkit mpiexec: rank [0-9]*: pid \([0-9]*\) .*/\1/p' "$T/job.err" | tr '\n' ' ')
kids=$(cat "$T"/kids/* 2>/dev/null | tr '\n' ' ')
mpx=$(awk '{print $4}' "/proc/$agent/stat" 2>/dev/null)
mine+=($agent $ranks $kids $mpx)
is "$(echo $ranks | wc -w) $(echo $kids | wc -w)" "3 3" "job started: 3 ranks, each left a child"
ok "$([ -s "$R/local-$agent/agent" ]; echo $?)" "the agent recorded itself"
kill -KILL "$agent" && kill -KILL "$mpx"
wait_gone 5 $agent $ranks; ok $? "mpiexec and agent SIGKILLed: the ranks die with the agent"
for k in $kids; do alive "$k" || break; done; ok $? "the ranks' children are still running"
nodeseg=$(cat "$R/local-$agent"/job-*/shm-node 2>/dev/null)
ok "$([ -n "$nodeseg" ] && [ -e "/dev/shm$nodeseg" ]; echo $?)" "the job's node segment the agent made is left too ($nodeseg)"

# leftovers made by hand: an orphaned agent dir (dead agent) with records of live processes,
# a registered /dev/shm file, and a record whose pid now belongs to an unrelated process
sleep 60 & s1=$!
sleep 60 & s2=$!
sleep 60 & u=$!
true & dead=$!
wait $dead
mine+=($s1 $s2 $u)
A="$R/local-99999"
mkdir -p "$A/job-7" "$A/job-8"
echo "$dead 4242" >"$A/agent"
printf '%s %s 0\n%s %s 1\n' $s1 "$(starttime $s1)" $s2 "$(starttime $s2)" >"$A/job-7/procs"
printf '%s %s 0\n' $u $(($(starttime $u) + 1000)) >"$A/job-8/procs"
shm=/dev/shm/lamkit-t0700-$$
: >"$shm"
at_exit "rm -f $shm"
echo "$shm" >"$A/job-7/files"

before=$(find "$R" | sort)
out=$("$LAMKIT" wipe -n 2>"$T/n.err"); rc=$?
is "$rc" 0 "wipe -n exits 0"
like "$out" "^lamkit wipe: $host: dry run: would kill 5 processes, would remove 2 registered files, would remove 5 session directories" "wipe -n summary"
like "$out" "would kill pid $s1 \(rank 0 of $A/job-7\)" "wipe -n lists what it would kill"
is "$(find "$R" | sort)" "$before" "wipe -n removed nothing"
for p in $kids $s1 $s2 $u; do alive "$p" || break; done; ok $? "wipe -n killed nothing"
ok "$([ -e "$shm" ]; echo $?)" "wipe -n left the registered file"

out=$("$LAMKIT" wipe 2>"$T/w.err"); rc=$?
is "$rc" 0 "wipe exits 0"
is "$out" "lamkit wipe: $host: killed 5 processes, removed 2 registered files, removed 5 session directories, 5 recorded processes already gone, left 1 reused pid alone" "wipe summary"
like "$(cat "$T/w.err")" "^lamkit wipe: $A/job-8/procs: pid $u is now another process" "the reused pid is reported with its record"
is "$(wc -l <"$T/w.err")" 1 "and that is the only remark"
wait_gone 3 $kids $s1 $s2; ok $? "every recorded process and what the ranks left is gone"
alive "$u"; ok $? "the unrelated process with a recorded pid survives"
is "$(ls -A "$R")" "" "no session file left"
ok "$([ ! -e "$shm" ]; echo $?)" "the registered /dev/shm file is removed"
ok "$([ ! -e "/dev/shm$nodeseg" ]; echo $?)" "and the job's node segment"

out=$("$LAMKIT" wipe 2>&1); rc=$?
is "$rc" 0 "second wipe exits 0"
is "$out" "lamkit wipe: $host: nothing to do" "second wipe: nothing to do"

# the node-side worker of a multi-node wipe
sleep 60 & s3=$!
mine+=($s3)
mkdir -p "$R/local-99998/job-1"
printf '%s %s 0\n' $s3 "$(starttime $s3)" >"$R/local-99998/job-1/procs"
out=$("$LAMKIT" agent --wipe 2>&1); rc=$?
is "$rc" 0 "agent --wipe exits 0"
is "$out" "wipe host=$host dry=0 killed=1 gone=0 reused=0 untrusted=0 files=0 skipped=0 dirs=2 failed=0" "agent --wipe reports in one line"
wait_gone 3 $s3; ok $? "agent --wipe killed the recorded process"
done_testing
