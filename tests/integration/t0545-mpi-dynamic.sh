#!/bin/bash
# t0545: dynamic processes in lamkit's own MPI (doc/PROTOCOL-mpi-wire.md section 8), with
# tests/mpi/lk_dyn built by the tree: MPI_Comm_spawn of children that talk with their parents
# both ways, barrier and allreduce over the intercommunicator and over MPI_Intercomm_merge;
# spawn_multiple of two commands with their MPI_APPNUM; accept/connect between two separately
# started jobs (port through a file, and through the universe's name service); MPI_Comm_join
# over a tcp socket; shm between the jobs of one node (0 B .. 4 MiB both ways checked, the
# counters, LAMKIT_TP=tcp, tcp across nodes); disconnect lets the other job's processes go
# (rounds of spawn or accept/connect and disconnect hold no more fds, sockets or segments than
# the first); a child that crashes or is killed fails the job
# with one line; a bogus port is MPI_ERR_PORT at once, an unaccepted one after LAMKIT_MPI_CONNECT_TIMEOUT; a spawn the universe
# refuses is MPI_ERR_SPAWN in every errcode; the info keys path and wdir; spawns with 1024 and
# with long arguments, and one line from mpiexec past the bounds; nothing left behind.
# On one node, and on 4 ssh namespace nodes.
# timeout: 480
. "$(dirname "$0")/../lib/common.sh"
D=$LAMKIT_TOP/out/mpi-lamkit
[ "$LAMKIT_VARIANT" = asan ] && D=$LAMKIT_TOP/out/asan/mpi-lamkit
P=$D/lk_dyn
[ -x "$P" ] || skip_all "lk_dyn not built"
left() { pgrep -f "^$P" | tr '\n' ' '; }
lines() { printf '%s\n' "$1" | grep -c -- "$2"; }
lkmpi_before=$(ls /dev/shm | grep '^lkmpi-' | sort)

# server WHERE ARGS... / client: two jobs started apart; the client's output in $out, both rcs
pair() {
	local where=$1 sargs=$2 cargs=$3
	rm -f "$T/port"
	# shellcheck disable=SC2086
	(lkx $sargs "$P" server "$where" >"$T/server.out" 2>&1; echo $? >"$T/server.rc") &
	# shellcheck disable=SC2086
	out=$(lkx $cargs "$P" client "$where" 2>&1); rc=$?
	wait
	sout=$(cat "$T/server.out") src=$(cat "$T/server.rc")
}

# ---- one node ----
out=$(LKX_TIMEOUT=60 lkx --local -n 2 "$P" spawn 3 2>&1); rc=$?
is "$rc" 0 "2 parents spawn 3 children, all exit 0"
like "$out" "lk_dyn: spawn parents=2 children=3 talked" "messages both ways, barrier, allreduce, merge"
like "$out" "lk_dyn: OK size=2 checks=" "the parents' checks pass"
like "$out" "lk_dyn child: OK size=3 checks=" "the children's checks pass"
[ "$rc" = 0 ] || diag "$out"
# the children build their side from the id and cards in their KVS; with the root last, and
# through the full accept/connect handshake as any other job connects
out=$(LKX_TIMEOUT=60 lkx --local -n 3 "$P" spawn 2 2 2>&1); rc=$?
is "$rc" 0 "3 parents (root 2) spawn 2 children"
like "$out" "lk_dyn child: OK size=2 checks=" "children and parents talk, each rank to each"
[ "$rc" = 0 ] || diag "$out"
out=$(LKX_TIMEOUT=60 lkx --local -n 2 -genv LAMKIT_MPI_SPAWN handshake "$P" spawn 3 1 2>&1); rc=$?
is "$rc" 0 "LAMKIT_MPI_SPAWN=handshake: 2 parents (root 1) spawn 3 children over accept/connect"
like "$out" "lk_dyn child: OK size=3 checks=" "children and parents talk, each rank to each"
[ "$rc" = 0 ] || diag "$out"
out=$(LKX_TIMEOUT=60 lkx --local-agents 3:2 -n 2 "$P" spawn 4 2>&1); rc=$?
is "$rc" 0 "--local-agents 3:2: 4 children on the other agents' slots"
like "$out" "lk_dyn child: OK size=4 checks=" "talk with their parents"
out=$(LKX_TIMEOUT=60 lkx --local -n 2 "$P" multi 2>&1); rc=$?
is "$rc" 0 "spawn_multiple of 1 + 2 children"
like "$out" "lk_dyn: spawn_multiple 1\+2 appnums ok" "MPI_APPNUM 0 for the first command, 1 for the second"
like "$out" "lk_dyn child: OK size=3 checks=" "the children of both commands are one job of 3"
pair "file:$T/port" "--local -n 2" "--local -n 3"
is "$src:$rc" "0:0" "accept/connect between two jobs, the port in a file"
like "$sout" "lk_dyn: server accepted and talked" "the server job (2 ranks) talked"
like "$out" "lk_dyn: OK size=3 checks=" "the client job (3 ranks) talked"
# ---- shm between the jobs of one node (doc/PROTOCOL-mpi-wire.md section 8.1) ----
# one rank in each job: every shm fragment a rank sends goes to the other job
tpline() { printf '%s\n' "$1" | grep -c -E "^lamkit tp: rank 0 sent self 0 frags 0 bytes; shm [1-9][0-9]* frags [0-9]+ bytes; tcp [01] frags $2"; }
out=$(LKX_TIMEOUT=60 LAMKIT_TP_STATS=1 lkx --local -n 1 "$P" xfer 1 2>&1); rc=$?
is "$rc" 0 "a parent and its child exchange 0 B .. 4 MiB both ways"
like "$out" "lk_dyn: xfer children=1 checked" "every byte checked on the parent's side"
like "$out" "lk_dyn child: OK size=1 checks=" "and on the child's"
is "$(tpline "$out" '[0-9]{1,4} bytes')" 2 "both sent over shm (at most the first fragment over tcp)"
[ "$rc" = 0 ] || diag "$out"
out=$(LKX_TIMEOUT=60 LAMKIT_TP_STATS=1 LAMKIT_SHM_LARGE=copy lkx --local -n 1 "$P" xfer 1 2>&1)
rc=$?
is "$rc" 0 "the same with LAMKIT_SHM_LARGE=copy"
is "$(tpline "$out" '[0-9]{1,4} bytes')" 2 "the large messages' data through the rings too"
is "$(printf '%s\n' "$out" | awk '/^lamkit tp: rank [0-9]+ sent/ && $14 >= 8388608 { n++ } END { print n + 0 }')" 2 \
	"at least 8 MiB each way over shm"
out=$(LKX_TIMEOUT=60 LAMKIT_TP_STATS=1 LAMKIT_TP=tcp lkx --local -n 1 "$P" xfer 1 2>&1); rc=$?
is "$rc" 0 "LAMKIT_TP=tcp: the parent and child still talk"
is "$(printf '%s\n' "$out" | grep -c 'shm 0 frags 0 bytes; tcp [1-9][0-9]* frags [0-9]\{7,\} bytes')" 2 \
	"over tcp only"
out=$(LKX_TIMEOUT=60 lkx --local -n 2 "$P" xfer 3 2>&1); rc=$?
is "$rc" 0 "2 parents and 3 children (shm inside each job and between them)"
like "$out" "lk_dyn child: OK size=3 checks=" "the children's checks pass"
[ "$rc" = 0 ] || diag "$out"
LAMKIT_TP_STATS=1 pair "file:$T/port1" "--local -n 1" "--local -n 1"
is "$src:$rc" "0:0" "accept/connect between two one-rank jobs"
is "$(tpline "$(printf '%s\n%s' "$sout" "$out")" '[0-9]+ bytes')" 2 "switched to shm, both ways"
# ---- disconnect lets the other job go (doc/PROTOCOL-mpi-wire.md section 8.2) ----
# rounds of spawn + disconnect while the children end (MPICH's spawn/concurrent_spawns): after
# each, a parent holds what it held after the first (fds, sockets) and no segment of a child
# (counted from /proc/self); its transport's counters at the end say the same
stats_ok() { # lines "other jobs: N met, C connections (C ending), 0 segments": all of them
	printf '%s\n' "$1" | grep 'lamkit tp: rank [0-9]* other jobs:' |
		grep -cvE 'other jobs: [0-9]+ met, ([0-9]+) connections \(\1 ending\), 0 segments$'
}
out=$(LKX_TIMEOUT=150 LAMKIT_TP_STATS=1 lkx --local -n 2 "$P" disc 2 20 2>&1); rc=$?
is "$rc" 0 "20 rounds of spawn 2 + disconnect: the parents go on in their world, all exit 0"
like "$out" "lk_dyn: disc rounds=20 children=2 fds ([0-9]+)\.\.\1 sockets ([0-9]+)\.\.\2 maps 0" \
	"after each round as many fds and sockets as after the first, no segment mapped"
is "$(lines "$out" 'lk_dyn child: OK size=2')" 20 "every round's children end (exit 0) after disconnecting"
is "$(lines "$out" 'other jobs: ')" 42 "a transport line from each parent and child"
is "$(stats_ok "$out")" 0 "none holds a connection (but ending ones) or a segment of the other job at its end"
[ "$rc" = 0 ] || diag "$out"
out=$(LKX_TIMEOUT=100 LAMKIT_TP=tcp lkx --local -n 1 "$P" disc 1 10 2>&1); rc=$?
is "$rc" 0 "LAMKIT_TP=tcp: 10 rounds of spawn 1 + disconnect"
like "$out" "lk_dyn: disc rounds=10 children=1 fds ([0-9]+)\.\.\1 sockets ([0-9]+)\.\.\2 maps 0" \
	"the tcp connections to the children are closed after each round"
# the same processes meet again and again (MPICH's spawn/disconnect_reconnect): accept/connect
# over a port after each disconnect, shm and tcp; nothing of the other job held at the end
out=$(LKX_TIMEOUT=100 LAMKIT_TP_STATS=1 lkx --local -n 2 "$P" reconnect 2 10 2>&1); rc=$?
is "$rc" 0 "10 rounds of disconnect and accept/connect between the same two jobs"
like "$out" "lk_dyn: reconnect rounds=10 fds [0-9]+\.\.[0-9]+ sockets [0-9]+\.\.[0-9]+ maps 0" \
	"the parents: fds and sockets bounded, no segment mapped after the last"
like "$out" "lk_dyn child: OK size=2 checks=" "the children check the same on their side"
is "$(stats_ok "$out")" 0 "the transports' counters at the end agree"
[ "$rc" = 0 ] || diag "$out"
out=$(LKX_TIMEOUT=60 lkx --local -n 2 "$P" crash kill 2>&1); rc=$?
is "$rc" 137 "a child killed during a 4 MiB message fails the job"
is "$(lines "$out" '^lamkit mpiexec:')" 1 "with one line"
like "$out" "spawned job 1 \(lk_dyn\): rank 1 \(pid [0-9]+ on [^)]+\) killed by signal 9" "naming it"
is "$(lines "$out" '^lamkit MPI:')" 0 "and no line from the parents"
sleep 0.5
is "$(lkmpi_leaked "$lkmpi_before")" "" "no segment left behind"
out=$(lkx --local -n 2 "$P" join 2>&1); rc=$?
is "$rc" 0 "MPI_Comm_join over a tcp socket"
like "$out" "lk_dyn: join talked" "the two sides talk over the join intercommunicator"
t0=$(date +%s)
out=$(LAMKIT_MPI_CONNECT_TIMEOUT=2 lkx --local-agents 1:2 -n 2 "$P" errors 2>&1); rc=$?
t1=$(date +%s)
is "$rc" 0 "MPI_ERR_PORT for a dead and a garbage port, MPI_ERR_NAME for an unknown name, MPI_ERR_SPAWN in every errcode of a refused spawn"
like "$out" "lk_dyn: unaccepted connect failed after ([2-9]|1[0-9])\.[0-9] s" "an unaccepted connect gives up after the timeout (2 s), not before"
ok "$([ $((t1 - t0)) -lt 20 ] && echo 0 || echo 1)" "all within a bounded time ($((t1 - t0)) s)"
like "$out" "lamkit mpiexec: rank 0 on [^ ]+ cannot spawn: 64 processes do not fit" \
	"the refused spawn: one line from mpiexec, the job goes on"
out=$(LKX_TIMEOUT=60 lkx --local -n 2 "$P" crash 3 2>&1); rc=$?
is "$rc" 3 "a child exiting 3 fails the job with 3"
is "$(lines "$out" '^lamkit mpiexec:')" 1 "with one line"
like "$(printf '%s\n' "$out" | tail -n 1)" \
	"^lamkit mpiexec: spawned job 1 \(lk_dyn\): rank 1 \(pid [0-9]+ on [^)]+\) exited with status 3$" \
	"naming the spawned job, the rank and the status"
# the info keys "path" (directories searched before PATH) and "wdir": the program is a bare
# name found only in $T/bin; a name found nowhere fails the job with one line saying where
# it was looked for
mkdir -p "$T/bin" "$T/wd"
ln -s "$P" "$T/bin/lk_dyn_via_path"
out=$(LKX_TIMEOUT=60 lkx --local -n 2 "$P" path "$T/bin" lk_dyn_via_path "$T/wd" 2>&1)
rc=$?
is "$rc" 0 "a program found only along the info key path, run in the info key wdir"
like "$out" "lk_dyn: path spawn talked" "the children (cwd checked) talk with their parents"
like "$out" "lk_dyn child: OK size=2 checks=" "the children's checks pass"
[ "$rc" = 0 ] || diag "$out"
out=$(LKX_TIMEOUT=60 lkx --local -n 2 "$P" path "$T/nobin" lk_dyn_via_path "$T/wd" 2>&1)
rc=$?
is "$rc" 127 "a program found nowhere: exit 127"
is "$(lines "$out" '^lamkit mpiexec:')" 1 "with one line"
like "$out" "^lamkit mpiexec: spawned job 1 \(lk_dyn_via_path\): cannot start rank 0 on [^ ]+: lk_dyn_via_path \(looked along PATH=$T/nobin:[^)]*\): No such file or directory$" \
	"naming the program and where it was looked for"
# many and long arguments, over PMI-2 (the default under the agents) and PMI-1; past the
# bounds, one line from mpiexec says which
for v in 2 1; do
	out=$(LKX_TIMEOUT=60 lkx --local -n 1 -genv LAMKIT_PMI_VERSION $v "$P" manyargs 1024 100 2>&1)
	rc=$?
	is "$rc" 0 "PMI-$v: a spawn with 1024 arguments of 100 bytes"
	like "$out" "lk_dyn: manyargs 1024 x 100 bytes talked" "every argument reaches the children"
	[ "$rc" = 0 ] || diag "$out"
	out=$(LKX_TIMEOUT=60 lkx --local -n 1 -genv LAMKIT_PMI_VERSION $v "$P" manyargs 2 9000 2>&1)
	is "$?" 0 "PMI-$v: arguments of 9000 bytes (longer than a PMI-1 line)"
	out=$(LKX_TIMEOUT=60 lkx --local -n 1 -genv LAMKIT_PMI_VERSION $v "$P" manyargs 2 20000 2>&1)
	rc=$?
	ok "$([ "$rc" != 0 ]; echo $?)" "PMI-$v: an argument of 20000 bytes is refused (exit $rc)"
	like "$out" "^lamkit mpiexec: rank 0 on [^ ]+ cannot spawn: a spawn (line|argument) of 200[0-9]+ bytes.* is over the (PMI-2 )?bound of 16384 bytes$" \
		"with one line from mpiexec naming the bound"
	out=$(LKX_TIMEOUT=60 lkx --local -n 1 -genv LAMKIT_PMI_VERSION $v "$P" manyargs 5000 4 2>&1)
	rc=$?
	ok "$([ "$rc" != 0 ]; echo $?)" "PMI-$v: 5000 arguments are refused (exit $rc)"
	like "$out" "^lamkit mpiexec: rank 0 on [^ ]+ cannot spawn: .*4096 arguments" \
		"with one line from mpiexec naming the bound"
done
sleep 1
is "$(left)" "" "no parent or child left"
is "$(pgrep -f '^lk_dyn_via_path' | tr '\n' ' ')" "" "no child started through the path left"
is "$(lkmpi_leaked "$lkmpi_before")" "" "no lamkit MPI segment left in /dev/shm"

# ---- four ssh namespace nodes, 2 slots each ----
if [ "$(id -u)" = 0 ] && { command -v sshd >/dev/null || [ -x /usr/sbin/sshd ]; }; then
	. "$LAMKIT_TOP/tests/lib/netns.sh"
	at_exit netns_down
	K=4
	if netns_up $K; then
		R="$LAMKIT_TMPDIR/lamkit-$(id -u)"
		U="$R/universe"
		at_exit '[ -f "$U" ] && timeout 30 "$LAMKIT" wipe >/dev/null 2>&1'
		{
			echo "boot = \"ssh\"; algorithm = \"linear\"; timeout = 15"
			echo "ssh = { options = { \"-F\", \"$NETNS_SSH_CONFIG\" }, verify = false }"
			echo "defaults = { program = \"$LAMKIT\" }"
			echo "for i = 1, $K do node(\"n\" .. i) { cpu = 2 } end"
		} >"$T/u.lua"
		(cd "$T" && timeout 60 "$LAMKIT" boot u.lua >/dev/null 2>&1)
		is $? 0 "boot $K ssh nodes"
		out=$(lkx -n 2 "$P" spawn 4 2>&1); rc=$?
		is "$rc" 0 "2 parents on n1 spawn 4 children on the other nodes"
		like "$out" "lk_dyn: spawn parents=2 children=4 talked" "they talk over tcp across nodes"
		like "$out" "lk_dyn child: OK size=4 checks=" "the children's checks pass"
		[ "$rc" = 0 ] || { diag "$out"; diag_agent_logs; }
		# across nodes the jobs stay on tcp: 2 parents fill n1, the child is elsewhere
		out=$(LAMKIT_TP_STATS=1 lkx -n 2 "$P" xfer 1 2>&1); rc=$?
		is "$rc" 0 "a parent and a child on another node exchange up to 4 MiB"
		like "$out" "shm 0 frags 0 bytes; tcp [0-9]+ frags [0-9]{7,} bytes" "over tcp (the child's counters)"
		[ "$rc" = 0 ] || diag "$out"
		out=$(lkx -n 2 "$P" multi 2>&1); rc=$?
		is "$rc" 0 "spawn_multiple across nodes"
		like "$out" "lk_dyn: spawn_multiple 1\+2 appnums ok" "with their MPI_APPNUM"
		pair "name:lk-dyn-$$" "-n 2 -hosts n2" "-n 2 -hosts n4"
		is "$src:$rc" "0:0" "a job on n2 accepts, a job on n4 connects, the port via publish/lookup"
		like "$sout" "lk_dyn: server accepted and talked" "the server job talked"
		like "$out" "lk_dyn: client connected and talked" "the client job talked"
		[ "$src:$rc" = 0:0 ] || diag "$sout$out"
		out=$(lkx -n 2 --map-by node "$P" join 2>&1); rc=$?
		is "$rc" 0 "MPI_Comm_join between ranks on two nodes"
		[ "$rc" = 0 ] || diag "$out"
		out=$(lkx -n 2 "$P" crash 3 2>&1); rc=$?
		is "$rc" 3 "across nodes, a child exiting 3 fails the job"
		is "$(lines "$out" '^lamkit mpiexec:')" 1 "with one line"
		pids=$(awk '$1 == "node" { print $8 }' "$U" | tr '\n' ' ')
		(cd "$T" && timeout 30 "$LAMKIT" halt >/dev/null 2>&1)
		is $? 0 "halt"
		wait_gone 5 $pids; ok $? "every agent gone"
		is "$(left)" "" "no parent or child left on any node"
	else
		ok 1 "netns_up $K"
	fi
fi
done_testing
