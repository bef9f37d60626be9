#!/bin/bash
# t0410: a universe of fake nodes on this host (boot module `local`): boot, nodes, grow, halt,
# a second boot refused, bad schemas start nothing, failing nodes named with their stage (launch,
# timeout, auth) and the others halted, -k keeps a partial universe, recon leaves nothing behind,
# kill -9 of every agent then `wipe` clears the universe.
# timeout: 150
. "$(dirname "$0")/../lib/common.sh"
R="$LAMKIT_TMPDIR/lamkit-$(id -u)"
U="$R/universe"
mine=()
at_exit 'for p in "${mine[@]}"; do kill -9 "$p" 2>/dev/null; done'
at_exit '[ -f "$U" ] && LAMKIT_TMPDIR="$LAMKIT_TMPDIR" timeout 20 "$LAMKIT" wipe >/dev/null 2>&1'
lk() { (cd "$T" && timeout -k 5 60 "$LAMKIT" "$@"); }
agent_pids() { [ -f "$U" ] && awk '$1 == "node" { print $8 }' "$U" | tr '\n' ' '; }
lamkit_procs() { # agents of this test's universe still running (by their --tmpdir argument)
	local p n=0
	for p in $(pgrep -f -- "--tmpdir $LAMKIT_TMPDIR"); do pids_gone "$p" || n=$((n + 1)); done
	echo $n
}

cat >"$T/s.lua" <<'EOS'
boot = "local"
for i = 1, 3 do node("n" .. i) { cpu = 2, rack = "r" .. i } end
EOS
out=$(lk boot -v s.lua 2>&1); rc=$?
is "$rc" 0 "boot 3 fake nodes"
is "$(printf '%s\n' "$out" | grep -c ' up (')" 3 "-v: a line per node"
like "$out" "3 of 3 node\(s\) up in [0-9.]+ s \(local, windowed\)" "summary line"
is "$(stat -c %a "$U")" 600 "universe state file is 0600"
like "$(cat "$U")" "^lamkit-universe 1" "state file format"
like "$(grep '^node 2 ' "$U")" "^node 2 n2 127\.0\.0\.1 [0-9]+ 2 1 [0-9]+ 0 rack=r2$" "node line: address, port, cpus, pid, schema keys"
pids=$(agent_pids)
mine+=($pids)
is "$(echo $pids | wc -w)" 3 "three agent pids recorded"
for p in $pids; do
	is "$(ps -o sid= -p "$p" | tr -d ' ')" "$p" "agent $p is a daemon (leads its own session)"
done

out=$(lk boot s.lua 2>&1); rc=$?
is "$rc" 1 "a second boot is refused"
like "$out" "a universe of 3 node\(s\) is running already" "and says why"

out=$(lk nodes 2>&1); rc=$?
is "$rc" 0 "nodes: all up"
is "$(printf '%s\n' "$out" | grep -cE '^[123] +n[123] +127\.0\.0\.1:[0-9]+ +2 yes +up +0 +0')" 3 "nodes table: 3 rows up, no jobs"

out=$(lk grow --cpu 1 n4 2>&1); rc=$?
is "$rc" 0 "grow n4"
like "$out" "n4 up as node 4 \(1 cpu\(s\)\)" "grow says so"
out=$(lk grow n4 2>&1); rc=$?
is "$rc" 1 "growing by a node that is there already is refused"
pids=$(agent_pids)
mine+=($pids)
out=$(lk nodes 2>&1)
like "$out" "4 +n4 +127\.0\.0\.1:[0-9]+ +1 yes +up" "nodes lists n4"

out=$(lk halt 2>&1); rc=$?
is "$rc" 0 "halt"
like "$out" "4 node\(s\) halted" "halt summary"
wait_gone 5 $pids; ok $? "every agent is gone"
ok "$([ ! -e "$U" ]; echo $?)" "state file removed"
is "$(ls "$R" 2>/dev/null | wc -l)" 0 "no session directories left"
out=$(lk halt 2>&1); rc=$?
is "$rc" 1 "halt with no universe fails"
like "$out" "no universe is running" "and says so"
out=$(lk nodes 2>&1); rc=$?
is "$rc" 1 "nodes with no universe fails"

# a job's PMI fence runs over a tree of its agents (fan-out 4): agent 6 reports to agent 2
printf 'boot = "local"\nfor i = 1, 6 do node("t" .. i) { cpu = 1 } end\n' >"$T/six.lua"
lk boot six.lua >/dev/null 2>&1; is $? 0 "boot 6 fake nodes"
mine+=($(agent_pids))
p6=$(awk '$1 == "node" && $2 == 6 { print $8 }' "$U")
port2=$(awk '$1 == "node" && $2 == 2 { print $5 }' "$U")
port1=$(awk '$1 == "node" && $2 == 1 { print $5 }' "$U")
# agent 6 watches the head, agent 1, over one link of its own (the watch): not the fence's
to1() { ss -tnpH state established 2>/dev/null | grep "pid=$p6," | grep -c ":$port1 "; }
for _ in $(seq 40); do [ "$(to1)" -ge 1 ] && break; sleep 0.05; done
watch1=$(to1)
(cd "$T" && exec timeout 30 "$LAMKIT" mpiexec -n 6 sleep 3 >/dev/null 2>&1) &
job=$!
mine+=($job)
tree=0 star=0
for _ in $(seq 40); do
	conns=$(ss -tnpH state established 2>/dev/null | grep "pid=$p6,")
	printf '%s\n' "$conns" | grep -q ":$port2 " && tree=1
	[ "$(printf '%s\n' "$conns" | grep -c ":$port1 ")" -gt "$watch1" ] && star=1
	[ $tree = 1 ] && break
	sleep 0.05
done
is "$tree$star" 10 "agent 6 holds a fence link to agent 2 (its tree parent), none to agent 1"
out=$(lkx -n 6 "$MPI_BIN/mpich/ring" 2>&1); rc=$?
[ -x "$MPI_BIN/mpich/ring" ] && { is "$rc" 0 "MPICH ring over 6 agents fences through the tree"; like "$out" "ring: OK" "ring output"; }
wait $job
lk halt >/dev/null 2>&1; is $? 0 "halt the six"

# a bad schema: one line naming file:line, nothing started
printf 'boot = "local"\nnode "a" { cpu = 2 }\nnode "b" { cpu = 0 }\n' >"$T/bad.lua"
out=$(lk boot bad.lua 2>&1); rc=$?
is "$rc" 1 "bad schema fails"
is "$out" "lamkit boot: bad.lua:3: node 'b': cpu must be a positive integer, not 0" "one line: file:line and what"
ok "$([ ! -e "$U" ] && [ "$(lamkit_procs)" = 0 ]; echo $?)" "nothing started"

# one node whose agent program does not exist: stage launch, the others halted
cat >"$T/f.lua" <<EOS
boot = "local"
node "g1" { cpu = 1 }
node "bad" { cpu = 1, program = "$T/no-such-lamkit" }
node "g2" { cpu = 1 }
EOS
out=$(lk boot f.lua 2>&1); rc=$?
is "$rc" 1 "boot with a failing node fails"
like "$out" "bad failed at launch: .*no-such-lamkit.*No such file" "the node and the stage are named"
like "$out" "1 of 3 node\(s\) did not come up" "summary names the count"
sleep 0.2
is "$(lamkit_procs)" 0 "the nodes that came up were halted"
ok "$([ ! -e "$U" ]; echo $?)" "no universe state"

out=$(lk boot -k f.lua 2>&1); rc=$?
is "$rc" 1 "-k: still exit 1"
like "$out" "2 of 3 node\(s\) up" "-k keeps the two good nodes"
is "$(grep -c '^node ' "$U")" 2 "state has 2 nodes"
mine+=($(agent_pids))
lk halt >/dev/null 2>&1; is $? 0 "halt the partial universe"

# a launcher that takes the key and never starts the agent: stage timeout within the limit
cat >"$T/hang.sh" <<'EOS'
#!/bin/sh
read key
exec sleep 30
EOS
# a launcher that hands the agent a different key: stage auth, never retried
cat >"$T/badkey.sh" <<EOS
#!/bin/sh
read key
echo 0000000000000000000000000000000000000000000000000000000000000000 | exec "$LAMKIT" "\$@"
EOS
chmod +x "$T/hang.sh" "$T/badkey.sh"
cat >"$T/t.lua" <<EOS
boot = "local"
timeout = 1
node "ok1" { cpu = 1 }
node "hang" { cpu = 1, program = "$T/hang.sh" }
node "forged" { cpu = 1, program = "$T/badkey.sh" }
EOS
t0=$(date +%s%N)
out=$(lk boot -v t.lua 2>&1); rc=$?
ms=$((($(date +%s%N) - t0) / 1000000))
is "$rc" 1 "boot with a hanging and a forged node fails"
like "$out" "hang failed at timeout: no answer within 1 s" "hanging node: stage timeout"
like "$out" "forged failed at auth: .*authentication failed" "wrong key: stage auth"
like "$out" "authentication failed.*not retried" "boot logs the rejected peer"
ok "$([ "$ms" -lt 6000 ]; echo $?)" "and it ends within the timeout ($ms ms)"
sleep 0.3
is "$(pgrep -f "$T/hang.sh" | wc -l)" 0 "the hanging launcher was killed"
is "$(lamkit_procs)" 0 "nothing left running"

# recon: a table, nothing left behind
out=$(lk recon f.lua 2>&1); rc=$?
is "$rc" 1 "recon with a bad node exits 1"
like "$out" "g1 +yes +yes +[0-9.]+ +[0-9]+" "recon row: reachable, runs, version, cpus"
like "$out" "bad +yes +no .*launch:" "recon row of the bad node names the stage"
sleep 0.2
is "$(lamkit_procs)" 0 "recon leaves nothing running"
ok "$([ ! -e "$U" ]; echo $?)" "recon writes no universe"

# the schema's transport policy: a string is checked at boot; a function is called per job
cat >"$T/tpbad.lua" <<'EOS'
boot = "local"
transport = "shm+tcp,pigeon"
node("a") {}
EOS
out=$(lk boot tpbad.lua 2>&1); rc=$?
is "$rc" 1 "a bad transport string fails the boot"
like "$out" "tpbad\.lua:2: transport 'shm\+tcp,pigeon': 'pigeon' is not a path" "naming file, line and why"
cat >"$T/tp.lua" <<'EOS'
boot = "local"
transport = function(job)
  return #job.nodes == 2 and job.nodes[2].slots == 2 and ("shm+tcp,udp;cutoff=" .. job.size) or "x"
end
node("a") { cpu = 2 }; node("b") { cpu = 2 }
EOS
lk boot tp.lua >/dev/null 2>&1; is $? 0 "boot with transport = function(job)"
like "$(grep '^transport ' "$U")" "^transport function$" "the universe file says a function decides"
is "$(LKX_TIMEOUT=30 lkx -n 3 printenv LAMKIT_TP | sort -u)" "shm+tcp,udp;cutoff=3" \
	"mpiexec called it with the job and every rank got its answer"
is "$(LKX_TIMEOUT=30 lkx --tp tcp -n 1 printenv LAMKIT_TP)" "tcp" "--tp overrides the schema"
out=$(LKX_TIMEOUT=60 lkx -genv LAMKIT_TP_STATS 1 -n 4 "$LAMKIT_TOP/out/mpi-lamkit/ring" 2>&1); rc=$?
is "$rc" 0 "a lamkit MPI ring over tcp+udp between the nodes"
like "$out" "lamkit tp: rank [01] -> rank [23]: tcp\+udp: tcp_frags=[1-9]" "the pair across nodes is a multipath one"
sed -i 's/or "x"/or "x"\nend\ntransport = function() return 7/' "$T/tp.lua"
out=$(LKX_TIMEOUT=30 lkx -n 1 true 2>&1); rc=$?
ok "$([ $rc -ne 0 ]; echo $?)" "a function that returns no policy fails the job (exit $rc)"
like "$out" "tp\.lua: transport\(job\) returned 7, not a policy string" "in one line naming the schema"
lk halt >/dev/null 2>&1; is $? 0 "halt"

# LAM's names for the same things (the boot SSI paper): a bhost found in $LAMHOME/etc, -d,
# -ssi boot / boot_base_linear_win_size / boot_<module>_priority, LAM_MPI_SSI_* in the environment
mkdir -p "$T/lamhome/etc"
printf 'n1 cpu=1\nn2 cpu=1\n' >"$T/lamhome/etc/lam.bhost"
out=$(LAMHOME=$T/lamhome lk boot -d -ssi boot local -ssi boot_base_linear_win_size 1 lam.bhost 2>&1); rc=$?
is "$rc" 0 "lamboot style: -d -ssi boot local, the bhost found in \$LAMHOME/etc"
like "$out" "module local \(priority 0\), algorithm windowed, window 1" "-ssi boot_base_linear_win_size sets the window (fake names: local only when forced)"
like "$out" "start n1: .* agent --boot" "-d shows the launch commands"
lk halt >/dev/null 2>&1; is $? 0 "halt"
out=$(LAM_MPI_SSI_boot=local LAM_MPI_SSI_boot_base_linear_win_size=2 LAM_MPI_SSI_boot_local_priority=7 \
	LAMHOME=$T/lamhome lk boot -v lam.bhost 2>&1); rc=$?
is "$rc" 0 "LAM_MPI_SSI_boot from the environment"
like "$out" "module local \(priority 7\), algorithm windowed, window 2" "LAM_MPI_SSI_boot_<module>_priority and _base_linear_win_size"
lk halt >/dev/null 2>&1; is $? 0 "halt"
out=$(lk boot -ssi boot_linear_win 3 s.lua 2>&1); rc=$?
is "$rc" 100 "an unknown SSI parameter: usage error"
like "$out" "unknown SSI parameter 'boot_linear_win'" "naming it"

# kill -9 every agent with a job running, then wipe: nothing left
lk boot s.lua >/dev/null 2>&1; is $? 0 "boot again"
pids=$(agent_pids)
mine+=($pids)
kill -9 $pids
wait_gone 5 $pids; ok $? "agents killed"
out=$(lk wipe 2>&1); rc=$?
is "$rc" 0 "wipe with every agent dead"
is "$(printf '%s\n' "$out" | grep -cE '^[0-9]+ +n[123] +yes ')" 3 "a row per node"
ok "$([ ! -e "$U" ]; echo $?)" "universe state removed"
is "$(ls "$R" 2>/dev/null | wc -l)" 0 "no session files left"
is "$(lamkit_procs)" 0 "no process left"
done_testing
