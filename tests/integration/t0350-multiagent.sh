#!/bin/bash
# t0350: one job over several agents, on one host through the testing aid
# `mpiexec --local-agents K[:SLOTS]` (K forked agents standing for nodes "<host>:1".."<host>:K"):
# rank placement (block by slots with wrap-around, -ppn, --map-by node, -hosts), the PMI fence
# across agents, PMI_process_mapping as MPICH, Open MPI and lamkit's MPI read it, stdin to
# rank 0, failures on an agent other than rank 0's, an agent dying; nothing left behind. Also
# a universe state file whose agents cannot be reached or never answer, broken state files, and
# (when `lamkit boot` works here) jobs on a booted universe of three local agents.
# timeout: 400
. "$(dirname "$0")/../lib/common.sh"
need_mpich
B=$MPI_BIN/mpich
D=$LAMKIT_TOP/out/mpi-lamkit
[ "$LAMKIT_VARIANT" = asan ] && D=$LAMKIT_TOP/out/asan/mpi-lamkit
P=$LAMKIT_TOP/out/testprogs/pmi_check
[ "$LAMKIT_VARIANT" = asan ] && [ -x "$LAMKIT_TOP/out/asan/testprogs/pmi_check" ] &&
	P=$LAMKIT_TOP/out/asan/testprogs/pmi_check
host=$(hostname)
export OMPI_MCA_mpi_yield_when_idle=1 # more ranks than this host's CPUs

# where ARGS...: "rank:agent" of every rank, agents numbered from 1 in the order of their first
# rank (a rank's agent shows in its session directory)
where() {
	lkx "$@" sh -c 'echo "$PMI_RANK ${LAMKIT_SESSION_DIR%/*} $MPI_LOCALRANKID/$MPI_LOCALNRANKS"' |
		sort -n | awk '{ if (!($2 in a)) a[$2] = ++n; printf "%s%d:%d", (NR > 1 ? " " : ""), $1, a[$2] } END { print "" }'
}
is "$(where --local-agents 2:2 -n 4)" "0:1 1:1 2:2 3:2" "block by slots: 2 agents x 2 slots"
is "$(where --local-agents 3:2 -n 8)" "0:1 1:1 2:2 3:2 4:3 5:3 6:1 7:1" "block: past the slots it starts again"
is "$(where --local-agents 3:8 -n 3)" "0:1 1:1 2:1" "block: 3 ranks fit the first node"
is "$(where --local-agents 3 -ppn 2 -n 7)" "0:1 1:1 2:2 3:2 4:3 5:3 6:1" "-ppn 2 over 3 agents"
is "$(where --local-agents 3 --map-by node -n 7)" "0:1 1:2 2:3 3:1 4:2 5:3 6:1" "--map-by node"
is "$(where --local-agents 3 --map-by slot -ppn 1 -n 3)" "0:1 1:2 2:3" "--map-by slot is the default"
out=$(lkx --local-agents 3 --map-by node -n 7 sh -c 'echo $PMI_RANK $MPI_LOCALRANKID/$MPI_LOCALNRANKS' | sort -n | tr '\n' ' ')
is "$out" "0 0/3 1 0/2 2 0/2 3 1/3 4 1/2 5 1/2 6 2/3 " "local ids count an agent's ranks in order, not contiguous ones"
is "$(lkx --local-agents 2:3 sh -c 'echo x' | wc -l)" 6 "no -n: every slot of the agents"
is "$(lkx --local-agents 2:3 -hosts "$host:2" sh -c 'echo x' | wc -l)" 3 "no -n under -hosts: that node's slots"
err=$(lkx -v --local-agents 3:1 -hosts "$host:3,$host:1" -n 3 true 2>&1); rc=$?
is "$rc" 0 "-hosts picks agents"
like "$err" "agent 0 on $host:3: 2 ranks from rank 0" "in the order given: rank 0 on the first named"
like "$err" "agent 1 on $host:1: 1 rank from rank 1" "then the next; the unnamed agent is not used"
like "$err" "3 ranks on 2 agents \(oversubscribed\), PMI_process_mapping \(vector,\(0,2,1\),\(0,1,1\)\)" "-v shows the placement and the mapping"
err=$(lkx --local-agents 2 -hosts "$host:1,nosuch" -n 2 true 2>&1); rc=$?
is "$rc" 100 "an unknown -hosts entry is a usage error"
is "$err" "lamkit mpiexec: host 'nosuch' is not in the universe (nodes: $host:1, $host:2)" "one line naming it and the nodes"
err=$(lkx -hosts nosuch -n 1 true 2>&1); rc=$?
is "$rc" 100 "without a universe, -hosts may only name this host"
like "$err" "host 'nosuch' is not in the universe \(nodes: $host\)" "and says so"
is "$(lkx -hosts "localhost,$host" -n 1 echo ok)" "ok" "this host and localhost are fine"
err=$(lkx --local-agents 2 -ppn 1 --map-by node -n 2 true 2>&1); is "$?" 100 "-ppn with --map-by node is a usage error"
err=$(lkx --map-by rack -n 1 true 2>&1); is "$?" 100 "--map-by with an unknown kind is a usage error"

# MPICH programs across agents (MPICH reads the placement from PMI_process_mapping)
for opt in "--local-agents 2:2" "--local-agents 3 -ppn 1" "--local-agents 2 --map-by node"; do
	# shellcheck disable=SC2086
	out=$(lkx $opt -n 4 "$B/hello" | sort)
	want=$(for ((r = 0; r < 4; r++)); do echo "hello from rank $r of 4 on $host"; done | sort)
	is "$out" "$want" "MPICH hello -n 4 with $opt"
done
like "$(lkx --local-agents 3 --map-by node -n 6 "$B/ring" 3)" "^ring: OK laps=3 size=6 token=18$" "MPICH ring over 3 agents, map by node"
like "$(lkx --local-agents 3:1 -n 5 "$B/collectives" 64)" "^collectives: OK size=5 " "MPICH collectives over 3 agents, wrapped"
like "$(LKX_TIMEOUT=120 lkx --local-agents 2 -ppn 1 -n 2 "$B/large" 1048576)" "large: OK" "MPICH large messages between two agents"
out=$(lkx --local-agents 2 --map-by node -n 4 "$B/placement" | sort)
is "$out" "placement: rank 0 of 4 node [0,2] local 0 env 0/2
placement: rank 1 of 4 node [1,3] local 0 env 0/2
placement: rank 2 of 4 node [0,2] local 1 env 1/2
placement: rank 3 of 4 node [1,3] local 1 env 1/2" "MPICH sees the map-by-node placement (shared-memory groups)"
out=$(lkx --local-agents 3:1 -n 5 "$B/placement" | sort | sed 's/ local.*//')
is "$out" "placement: rank 0 of 5 node [0,3]
placement: rank 1 of 5 node [1,4]
placement: rank 2 of 5 node [2]
placement: rank 3 of 5 node [0,3]
placement: rank 4 of 5 node [1,4]" "MPICH sees the wrapped block placement"
is "$(lkx --local-agents 3:2 -n 4 "$B/universe" | sort -u | sed 's/.*universe size //' | sort -u)" 4 "universe size: the slots of the nodes used"
is "$(lkx --local-agents 3:2 --map-by node -n 4 "$B/universe" | sed 's/.*universe size //' | sort -u)" 6 "all three used: 6"

# the PMI fence across agents, over PMI_FD and PMI_PORT
for opt in "-ppn 1" "--map-by node" "-ppn 2 --pmi-port"; do
	# shellcheck disable=SC2086
	out=$(lkx --local-agents 3 $opt -n 5 "$P" 2>&1); rc=$?
	is "$rc/$(printf '%s\n' "$out" | grep -c ' ok (5 ranks')" "0/5" "pmi_check over 3 agents ($opt): every rank's values everywhere"
done
out=$(lkx --local-agents 3:5 --map-by node -n 5 "$P" | grep 'rank 4 of')
like "$out" "clique \[1,4\], universe 15" "libpmi's clique follows the mapping"

# Open MPI, when its test programs were built
if [ -x "$MPI_BIN/openmpi/placement" ]; then
	# every "node" is this host: TCP over loopback, not over interfaces that other tests
	# (network namespaces) may add and remove meanwhile
	export OMPI_MCA_btl_tcp_if_include=lo
	out=$(lkx --local-agents 2 --map-by node -n 4 "$MPI_BIN/openmpi/placement" | sort | sed 's/ local.*//')
	is "$out" "placement: rank 0 of 4 node [0,2]
placement: rank 1 of 4 node [1,3]
placement: rank 2 of 4 node [0,2]
placement: rank 3 of 4 node [1,3]" "Open MPI over 2 agents, one job id on both"
	like "$(lkx --local-agents 2 -ppn 2 -n 4 "$MPI_BIN/openmpi/ring" 2)" "ring: OK laps=2 size=4" "Open MPI ring over 2 agents"
	unset OMPI_MCA_btl_tcp_if_include
fi

# lamkit's own MPI: shared memory within an agent's clique, TCP between agents (over loopback:
# every "node" is this host, and other tests may add and remove interfaces meanwhile)
export LAMKIT_TCP_ADDR=127.0.0.1
for opt in "--local-agents 2 --map-by node" "--local-agents 3:1"; do
	for p in lk_p2p lk_coll; do
		# shellcheck disable=SC2086
		out=$(LKX_TIMEOUT=120 lkx $opt -n 4 "$D/$p" 2>&1); rc=$?
		is "$rc" 0 "lamkit MPI $p -n 4 with $opt exits 0"
		like "$out" "$p: OK size=4" "lamkit MPI $p -n 4 with $opt checks pass"
	done
done
like "$(lkx --local-agents 3 --map-by node -n 6 "$D/ring" 3)" "ring: OK laps=3 size=6" "lamkit MPI ring over 3 agents"
out=$(lkx --local-agents 3:1 -n 5 "$D/placement" | sort)
is "$out" "placement: rank 0 of 5 node [0,3] local 0 env 0/2
placement: rank 1 of 5 node [1,4] local 0 env 0/2
placement: rank 2 of 5 node [2] local 0 env 0/1
placement: rank 3 of 5 node [0,3] local 1 env 1/2
placement: rank 4 of 5 node [1,4] local 1 env 1/2" "lamkit MPI's node groups are the agents' ranks"
unset LAMKIT_TCP_ADDR

# stdin to rank 0 (on the first agent), others on other agents
head -c 5000000 /dev/urandom >"$T/in.bin"
want=$("$B/stdin" <"$T/in.bin" | sed 's/.*bytes=//')
got=$(cat "$T/in.bin" | lkx --local-agents 3 --map-by node -n 3 "$B/stdin" | sed 's/.*bytes=//')
is "$got" "$want" "5 MB piped reach rank 0 intact, ranks spread over 3 agents"
got=$(lkx --local-agents 2 -ppn 1 -n 2 "$B/stdin" <"$T/in.bin" | sed 's/.*bytes=//')
is "$got" "$want" "and from a regular file"

# failures on an agent other than rank 0's
run_v() { # NAME ARGS...: mpiexec -v; $rc, $ms, $pids (agents and ranks), $err (other lines)
	local name=$1 t0
	shift
	t0=$(date +%s%N)
	lkx -v "$@" >"$T/$name.out" 2>"$T/$name.err"
	rc=$?
	ms=$((($(date +%s%N) - t0) / 1000000))
	pids=$(sed -n 's/.*: pid \([0-9]*\) on .*/\1/p' "$T/$name.err" | tr '\n' ' ')
	err=$(grep -v -e ': pid [0-9]* on ' -e ' ranks\? on [0-9]* agents\?' -e '^lamkit mpiexec: agent [0-9]* on ' "$T/$name.err")
}
run_v segv --local-agents 3 --map-by node -n 6 "$B/segv" 4
is "$rc" 139 "a rank crashing on agent 2: exit 128+11"
like "$err" "^lamkit mpiexec: rank 4 \(pid [0-9]+ on $host:2\) killed by signal 11" "the message names the rank and its agent"
is "$(printf '%s\n' "$err" | grep -c 'lamkit mpiexec:')" 1 "one line from mpiexec"
is "$(echo $pids | wc -w)" 9 "-v named 3 agents and 6 ranks"
ok "$([ "$ms" -lt 5000 ]; echo $?)" "the ranks blocked on the other agents were ended quickly (${ms} ms)"
wait_gone 5 $pids; ok $? "no rank or agent left"
run_v abort --local-agents 3 -ppn 1 -n 3 "$B/abort" 2 7 100
is "$rc" 7 "MPI_Abort(7) on agent 3: exit 7"
like "$err" "rank 2 \(pid [0-9]+ on $host:3\) called MPI_Abort with code 7" "named with its agent"
wait_gone 5 $pids; ok $? "nothing left after the abort"
run_v early --local-agents 2 --map-by node -n 4 "$B/exitcode" 3 0 sleep
is "$rc" 1 "a rank on agent 2 exiting without MPI_Finalize: exit 1"
like "$err" "rank 3 \(pid [0-9]+ on $host:2\) exited without finalizing" "and says so"
wait_gone 5 $pids; ok $? "nothing left after an early exit"
is "$(lkx --local-agents 2 -ppn 1 -n 2 sh -c '[ $PMI_RANK = 1 ] && exit 5; sleep 30' 2>/dev/null; echo $?)" 5 "a non-MPI rank on agent 2 exiting 5: exit 5"

# an agent dies while the job runs: the job ends, the others' ranks with it
(cd "$T" && exec timeout -k 5 60 "$LAMKIT" mpiexec -v --local-agents 3 -ppn 1 -n 3 sh -c 'echo ready; exec sleep 60' >"$T/die.out" 2>"$T/die.err") &
mp=$!
for _ in $(seq 100); do [ "$(grep -c ready "$T/die.out" 2>/dev/null)" = 3 ] && break; sleep 0.05; done
pids=$(sed -n 's/.*: pid \([0-9]*\) on .*/\1/p' "$T/die.err" | tr '\n' ' ')
a2=$(sed -n "s/^lamkit mpiexec: agent: pid \([0-9]*\) on $host:2\$/\1/p" "$T/die.err")
ok "$([ -n "$a2" ]; echo $?)" "agent 2 is pid '$a2'"
[ -n "$a2" ] && kill -KILL "$a2"
wait $mp; rc=$?
is "$rc" 111 "an agent killed: exit 111"
like "$(cat "$T/die.err")" "the agent on $host:2 went away; job ended" "mpiexec names the agent"
wait_gone 5 $pids; ok $? "the other agents and every rank are gone"
is "$(ls "$LAMKIT_TMPDIR/lamkit-$(id -u)" 2>/dev/null)" "local-$a2" "only the killed agent's records are left (for lamkit wipe)"
rm -rf "$LAMKIT_TMPDIR/lamkit-$(id -u)/local-$a2"

# SIGTERM to mpiexec reaches the ranks on every agent
(cd "$T" && exec timeout -k 5 60 "$LAMKIT" mpiexec -v --local-agents 2 -ppn 1 -n 2 sh -c \
	'trap "echo got-TERM-$PMI_RANK; exit 9" TERM; echo ready; while :; do sleep 0.05; done' >"$T/sig.out" 2>"$T/sig.err") &
mp=$!
for _ in $(seq 100); do [ "$(grep -c ready "$T/sig.out" 2>/dev/null)" = 2 ] && break; sleep 0.05; done
a1=$(sed -n 's/^lamkit mpiexec: agent: pid \([0-9]*\) .*/\1/p' "$T/sig.err" | head -n 1)
mpx=$([ -n "$a1" ] && awk '{print $4}' "/proc/$a1/stat") # mpiexec is the agents' parent
kill -TERM "${mpx:-$mp}"
wait $mp; rc=$?
is "$rc" 143 "SIGTERM to mpiexec: exit 143"
is "$(grep -c got-TERM "$T/sig.out")" 2 "both agents' ranks got it"
pids=$(sed -n 's/.*: pid \([0-9]*\) on .*/\1/p' "$T/sig.err" | tr '\n' ' ')
wait_gone 5 $pids; ok $? "nothing left after SIGTERM"

# a universe state file: its agents are reached over TCP (here: nobody listens)
U=$T/universe
cat >"$U" <<EOF
lamkit-universe 1
id 0123456789abcdef0123456789abcdef
key 000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f
origin $host
module local
schema %00
booted 1700000000
node 1 n1 127.0.0.1 1 2 1 100 0
node 2 n2 127.0.0.1 1 2 1 101 1
node 3 head 127.0.0.1 1 4 0 102 1
EOF
chmod 600 "$U"
export LAMKIT_UNIVERSE=$U
t0=$(date +%s%N)
err=$(lkx -v true 2>&1); rc=$?
ms=$((($(date +%s%N) - t0) / 1000000))
is "$rc" 111 "an unreachable agent: exit 111"
like "$err" "4 ranks on 2 agents" "no -n: the slots of the schedulable nodes"
like "$err" "cannot reach the agent on n1 \(127.0.0.1:1\): .*Connection refused; is the universe up\? \('lamkit nodes' shows it, 'lamkit wipe' cleans up\)" "one line saying which and why"
is "$(printf '%s\n' "$err" | grep -c 'cannot reach')" 1 "said once"
ok "$([ "$ms" -lt 3000 ]; echo $?)" "at once (${ms} ms)"
err=$(lkx -hosts n2,bogus true 2>&1); rc=$?
is "$rc/$err" "100/lamkit mpiexec: host 'bogus' is not in the universe (nodes: n1, n2, head)" "-hosts checks the universe's nodes"
err=$(lkx -v -hosts head true 2>&1)
like "$err" "4 ranks on 1 agent, PMI_process_mapping \(vector,\(0,1,4\)\)" "-hosts may name a schedule=no node"
like "$err" "agent 0 on head: 4 ranks from rank 0" "and its slots make the default -n"
is "$(LAMKIT_UNIVERSE=none lkx -n 1 echo here)" "here" "LAMKIT_UNIVERSE=none runs here"
is "$(lkx --local -n 1 echo here)" "here" "so does --local"
if command -v python3 >/dev/null; then # a peer that accepts and never answers: bounded wait
	python3 -c 'import socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(8)
print(s.getsockname()[1], flush=True); sys.stdout.close()
c = [s.accept() for _ in range(1)]; time.sleep(20)' >"$T/port" &
	py=$!
	at_exit "kill $py 2>/dev/null"
	for _ in $(seq 100); do [ -s "$T/port" ] && break; sleep 0.05; done
	sed -i "s/^node 1 n1 127.0.0.1 1 /node 1 n1 127.0.0.1 $(cat "$T/port") /" "$U"
	t0=$(date +%s%N)
	err=$(lkx -n 1 true 2>&1); rc=$?
	ms=$((($(date +%s%N) - t0) / 1000000))
	is "$rc" 111 "a silent agent: exit 111"
	like "$err" "cannot reach the agent on n1 \(127.0.0.1:[0-9]+\): .*5000 ms" "after the 5 s handshake timeout"
	ok "$([ "$ms" -lt 8000 ]; echo $?)" "bounded (${ms} ms)"
	kill $py 2>/dev/null
fi
chmod 644 "$U"
err=$(lkx -n 1 true 2>&1); rc=$?
is "$rc" 111 "a state file others may read: exit 111"
like "$err" "^lamkit mpiexec: $U: .*'lamkit wipe' cleans up\)$" "one line naming it and lamkit wipe"
chmod 600 "$U"
echo "garbage here" >>"$U"
err=$(lkx -n 1 true 2>&1); rc=$?
is "$rc/$(printf '%s\n' "$err" | wc -l)" "111/1" "a malformed state file: exit 111, one line"
like "$err" "$U:11: malformed line" "naming the line"
is "$(lkx --local -n 1 echo here)" "here" "--local does not read it"

# a booted universe of three agents on this host (lamkit boot, local module), when boot works
printf 'boot = "local"\nnode "a" { cpu = 2 }\nnode "b" { cpu = 1 }\nnode "c" { cpu = 2, schedule = false }\n' >"$T/s.lua"
export LAMKIT_UNIVERSE=$T/u2
if (cd "$T" && timeout 60 "$LAMKIT" boot s.lua >"$T/boot.out" 2>&1); then
	at_exit "LAMKIT_UNIVERSE=$T/u2 timeout 20 $LAMKIT halt >/dev/null 2>&1"
	is "$(where -n 5)" "0:1 1:1 2:2 3:1 4:1" "universe: block by slots over a and b, c not scheduled"
	err=$(lkx -v true 2>&1)
	like "$err" "3 ranks on 2 agents" "universe: no -n is the schedulable slots"
	like "$err" "agent: pid [0-9]+ on b" "universe: each agent says hello"
	out=$(lkx -hosts c,a --map-by node -n 4 "$P" 2>&1); rc=$?
	is "$rc/$(printf '%s\n' "$out" | grep -c ' ok (4 ranks')" "0/4" "universe: PMI fence over two agents"
	like "$(lkx -n 6 "$B/ring" 2)" "ring: OK laps=2 size=6" "universe: MPICH ring, oversubscribed"
	lkx -n 3 "$B/hello" >"$T/c1.out" 2>&1 &
	c1=$!
	lkx -n 3 "$B/hello" >"$T/c2.out" 2>&1
	c2=$?
	wait $c1
	is "$?/$c2/$(cat "$T/c1.out" "$T/c2.out" | grep -c 'of 3 on')" "0/0/6" "universe: two jobs at once"
	is "$(echo data | lkx -n 3 "$B/stdin" | sed 's/.*bytes=//')" "$(echo data | "$B/stdin" | sed 's/.*bytes=//')" "universe: stdin to rank 0"
	run_v usegv -n 3 "$B/segv" 2
	is "$rc" 139 "universe: a crash on b: exit 139"
	like "$err" "rank 2 \(pid [0-9]+ on b\) killed by signal 11" "named with its node"
	rp=$(sed -n 's/^lamkit mpiexec: rank [0-9]*: pid \([0-9]*\) on .*/\1/p' "$T/usegv.err" | tr '\n' ' ')
	wait_gone 5 $rp; ok $? "universe: no rank left (the agents stay)"
	timeout 20 "$LAMKIT" halt >/dev/null 2>&1
	ok $? "universe: halted"
else
	echo "# booted-universe checks skipped: lamkit boot failed: $(tail -n 1 "$T/boot.out")"
fi
unset LAMKIT_UNIVERSE

is "$(ls "$LAMKIT_TMPDIR/lamkit-$(id -u)" 2>/dev/null)" "" "no session directory left"
done_testing
