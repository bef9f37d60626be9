#!/bin/bash
# t0420: a universe on 4 namespace "nodes", each with its own sshd, booted over real ssh with
# every launch algorithm (tree: agents start their children over ssh); nodes, grow, halt; recon
# with a node down; a node that cannot be reached fails at launch within the timeout and the
# others are halted; with ssh.verify = false the origin asks no resolver (a counting relay as
# the nameserver, in a mount namespace) and agents call back first to where ssh came from; a
# forged key fails at auth; kill -9 of every agent and rank then `wipe` leaves nothing; MPICH
# programs run across the nodes.
# timeout: 240
. "$(dirname "$0")/../lib/common.sh"
[ "$(id -u)" = 0 ] || skip_all "needs root (network namespaces)"
command -v sshd >/dev/null || [ -x /usr/sbin/sshd ] || skip_all "no sshd"
. "$LAMKIT_TOP/tests/lib/netns.sh"
at_exit netns_down
K=4
netns_up $K || { ok 1 "netns_up $K"; done_testing; }
R="$LAMKIT_TMPDIR/lamkit-$(id -u)"
U="$R/universe"
at_exit '[ -f "$U" ] && timeout 30 "$LAMKIT" wipe >/dev/null 2>&1'
lk() { (cd "$T" && timeout -k 5 90 "$LAMKIT" "$@"); }
agent_pids() { [ -f "$U" ] && awk '$1 == "node" { print $8 }' "$U" | tr '\n' ' '; }
ours() { # processes of this test's universe still running anywhere (agents, ranks, launchers)
	local p n=0
	for p in $(pgrep -f -- "$LAMKIT_TMPDIR|$T/"); do pids_gone "$p" || n=$((n + 1)); done
	echo $n
}
schema() { # schema FILE ALGORITHM [extra lines]
	local f=$1 alg=$2
	shift 2
	{
		echo "boot = \"ssh\"; algorithm = \"$alg\"; fanout = 2; timeout = 15"
		echo "ssh = { options = { \"-F\", \"$NETNS_SSH_CONFIG\" }, verify = false }"
		echo "defaults = { program = \"$LAMKIT\" }"
		echo "for i = 1, $K do node(\"n\" .. i) { cpu = 2 } end"
		printf '%s\n' "$@"
	} >"$f"
}

for alg in linear windowed tree; do
	schema "$T/$alg.lua" "$alg"
	out=$(lk boot -v "$alg.lua" 2>&1); rc=$?
	is "$rc" 0 "ssh boot of $K nodes, $alg"
	is "$(printf '%s\n' "$out" | grep -c ' up (')" $K "$alg: a line per node"
	like "$out" "$K of $K node\(s\) up in [0-9.]+ s \(ssh, $alg\)" "$alg: summary"
	for i in $(seq $K); do
		like "$(grep "^node $i " "$U")" "^node $i n$i $NETNS_SUBNET\.$((10 + i)) [0-9]+ 2 1 " \
			"$alg: n$i reached at its own address"
	done
	if [ $alg = tree ]; then
		like "$(grep '^node 3 ' "$U")" " 1 program=" "tree: n3 was started by n1's agent"
		like "$out" "n4 up \([0-9.]+ s, started by n1\)" "tree: -v names the starting agent"
	fi
	out=$(lk nodes 2>&1)
	is "$(printf '%s\n' "$out" | grep -c ' up ')" $K "$alg: nodes shows $K up"
	pids=$(agent_pids)
	lk halt >/dev/null 2>&1; is $? 0 "$alg: halt"
	wait_gone 5 $pids; ok $? "$alg: every agent gone"
done
is "$(ours)" 0 "nothing left running"

# The origin asks no resolver about names only ssh knows (ssh.verify = false): one lost reply
# to such a query stalled a whole boot for the resolver's 2.5 s retry. Boot runs in a mount
# namespace whose /etc/resolv.conf names a counting relay as the only nameserver (it answers
# nothing: a query costs 1 s and shows in the counter).
. "$LAMKIT_TOP/tests/lib/chaos.sh"
at_exit chaos_stop_all
isolated() { # isolated HOSTS-FILE|- LAMKIT-ARGS...: lamkit under our resolv.conf (and hosts)
	local h=$1
	shift
	(cd "$T" && exec timeout -k 5 90 unshare -m sh -c 'mount --bind "$1" /etc/resolv.conf &&
		{ [ "$2" = - ] || mount --bind "$2" /etc/hosts; } && shift 2 && exec "$@"' sh \
		"$T/resolv.conf" "$h" "$LAMKIT" "$@")
}
if ! command -v unshare >/dev/null; then
	ok 0 "# SKIP no unshare: resolver checks"
elif chaos_start dns --listen 127.0.0.153:53 --to 127.0.0.1:9; then
	printf 'nameserver 127.0.0.153\noptions timeout:1 attempts:1\n' >"$T/resolv.conf"
	out=$(isolated - boot -v tree.lua 2>&1); rc=$?
	is "$rc" 0 "verify = false: boot under a resolver that never answers"
	is "$(chaos_stat dns 0 received)" 0 "verify = false: not one resolver query from the origin"
	like "$(grep '^node 4 ' "$U")" "^node 4 n4 $NETNS_SUBNET\.14 " "verify = false: n4 at its address"
	pids=$(agent_pids)
	lk halt >/dev/null 2>&1; is $? 0 "verify = false: halt"
	wait_gone 5 $pids; ok $? "verify = false: every agent gone"
	# verify = true with the names in /etc/hosts: the address check holds, still no query
	{ cat /etc/hosts; for i in $(seq $K); do echo "$(netns_addr n$i) n$i"; done; } >"$T/hosts"
	schema "$T/verify.lua" thread
	sed -i 's/, verify = false//' "$T/verify.lua"
	n0=$(chaos_stat dns 0 received)
	out=$(isolated "$T/hosts" boot verify.lua 2>&1); rc=$?
	is "$rc" 0 "verify = true, names in /etc/hosts: boot"
	[ "$rc" = 0 ] || diag "$out"
	is "$(chaos_stat dns 0 received)" "$n0" "verify = true, names in /etc/hosts: no resolver query"
	like "$(grep '^node 2 ' "$U")" "^node 2 n2 $NETNS_SUBNET\.12 " "verify = true: n2 at its address"
	pids=$(agent_pids)
	lk halt >/dev/null 2>&1; is $? 0 "verify = true: halt"
	wait_gone 5 $pids; ok $? "verify = true: every agent gone"
	# the control: names that do not resolve reach the relay (so the zeros above mean something)
	n0=$(chaos_stat dns 0 received)
	out=$(isolated - boot verify.lua 2>&1); rc=$?
	is "$rc" 1 "verify = true, names unknown: boot refuses"
	like "$out" "cannot resolve host 'n1'" "and names the host"
	ok "$([ "$(chaos_stat dns 0 received)" -gt "$n0" ]; echo $?)" "the relay saw that query"
else
	ok 1 "start a counting relay on 127.0.0.153:53"
fi

# Without resolving, boot cannot put the origin's address on the route to a node first; the
# agent tries the address its ssh session came from (SSH_CONNECTION) first. Every other address
# of the origin is routed, on every node, to a neighbour that does not exist: a connect to one
# fails only after ARP gives up (about 3 s).
others=$(ip -4 -o addr show up | awk '$2 != "lo" { sub(/\/.*/, "", $4); print $4 }' |
	grep -vx "$NETNS_BRIDGE_ADDR" | tr '\n' ' ')
if [ -z "$others" ]; then
	ok 0 "# SKIP the origin has no address but the bridge's"
else
	for i in $(seq $K); do
		for a in $others; do netns_exec "n$i" ip route add "$a/32" via "$NETNS_SUBNET.250"; done
	done
	t0=$(date +%s%N)
	out=$(lk boot windowed.lua 2>&1); rc=$?
	dt=$((($(date +%s%N) - t0) / 1000000))
	is "$rc" 0 "verify = false, origin addresses the nodes cannot reach: boot"
	ok "$([ "$dt" -lt 2500 ]; echo $?)" "agents call back where ssh came from first ($dt ms)"
	pids=$(agent_pids)
	lk halt >/dev/null 2>&1; is $? 0 "halt"
	wait_gone 5 $pids; ok $? "every agent gone"
	for i in $(seq $K); do
		for a in $others; do netns_exec "n$i" ip route del "$a/32"; done
	done
fi

# MPICH across the nodes (placement by slots: 2 per node)
if [ -x "$MPI_BIN/mpich/ring" ]; then
	lk boot windowed.lua >/dev/null 2>&1; is $? 0 "boot for jobs"
	out=$(LKX_TIMEOUT=60 lkx -n 8 "$MPI_BIN/mpich/hello" 2>&1); rc=$?
	is "$rc" 0 "MPICH hello on 8 ranks across 4 nodes"
	[ "$rc" = 0 ] || { diag "$out"; diag_agent_logs; }
	for i in $(seq $K); do
		is "$(printf '%s\n' "$out" | grep -c "on n$i\$")" 2 "two ranks on n$i"
	done
	out=$(LKX_TIMEOUT=60 lkx -n 8 "$MPI_BIN/mpich/ring" 2>&1); rc=$?
	is "$rc" 0 "MPICH ring across nodes"
	[ "$rc" = 0 ] || { diag "$out"; diag_agent_logs; }
	out=$(LKX_TIMEOUT=60 lkx -n 8 "$MPI_BIN/mpich/collectives" 2>&1); rc=$?
	is "$rc" 0 "MPICH collectives across nodes"
	out=$(LKX_TIMEOUT=60 lkx -n 4 --map-by node "$MPI_BIN/mpich/hello" 2>&1); rc=$?
	is "$(printf '%s\n' "$out" | sort | tr '\n' ' ')" \
		"$(for i in 0 1 2 3; do echo "hello from rank $i of 4 on n$((i + 1))"; done | sort | tr '\n' ' ')" \
		"--map-by node: rank i on n(i+1)"
	# Open MPI across the nodes, on the agents' PMIx server (issue 34)
	if [ -x "$MPI_BIN/openmpi/ring" ]; then
		out=$(OMPI_MCA_pmix_base_verbose=10 LKX_TIMEOUT=60 lkx -n 8 "$MPI_BIN/openmpi/ring" 2>&1); rc=$?
		is "$rc:$(printf '%s\n' "$out" | grep -c '^ring: OK .*size=8')" "0:1" "Open MPI ring on 8 ranks across 4 nodes"
		is "$(printf '%s\n' "$out" | grep -c 'pmix) Selected component \[ext3x\]')" 8 "every rank on Open MPI's PMIx component"
		[ "$rc" = 0 ] || { diag "$out"; diag_agent_logs; }
		out=$(LKX_TIMEOUT=60 lkx -n 8 "$MPI_BIN/openmpi/collectives" 64 2>&1); rc=$?
		is "$rc:$(printf '%s\n' "$out" | grep -c 'collectives: OK size=8')" "0:1" "Open MPI collectives across nodes"
		out=$(LKX_TIMEOUT=120 lkx -n 4 --map-by node "$MPI_BIN/openmpi/large" 2>&1); rc=$?
		is "$rc:$(printf '%s\n' "$out" | grep -c 'large: OK')" "0:1" "Open MPI large messages between nodes"
		# spawn and accept/connect over the nodes: PMIx spawn, connect, direct modex across agents
		out=$(LKX_TIMEOUT=60 lkx -v -n 2 --map-by node "$MPI_BIN/openmpi/spawn" spawn 4 2>&1); rc=$?
		is "$rc:$(printf '%s\n' "$out" | grep -c '^parent: child [0-3] answered')" "0:4" "Open MPI MPI_Comm_spawn: 4 children across the nodes talk to their parents"
		nn=$(printf '%s\n' "$out" | grep -E 'spawned job 1 \(spawn\): rank [0-3]: pid [0-9]+ on n[1-4]$' | awk '{ print $NF }' | sort -u | tr '\n' ' ')
		ok "$([ "$(echo $nn | wc -w)" -ge 2 ]; echo $?)" "the children run on several nodes ($nn)"
		[ "$rc" = 0 ] || { diag "$out"; diag_agent_logs; }
		(LKX_TIMEOUT=60 lkx -n 2 --map-by node "$MPI_BIN/openmpi/portconn" server "svc-$$" >"$T/srv.out" 2>&1; echo "rc=$?" >>"$T/srv.out") &
		spid=$!
		out=$(LKX_TIMEOUT=60 lkx -n 2 --map-by node "$MPI_BIN/openmpi/portconn" client "svc-$$" 2>&1); rc=$?
		wait "$spid"
		is "$rc:$(printf '%s\n' "$out" | grep -c 'server said 7$'):$(grep -cE '^(portconn: server: 2 clients sent 2001|rc=0)$' "$T/srv.out")" "0:2:2" "Open MPI accept/connect between two jobs across the nodes"
		[ "$rc" = 0 ] || { diag "$out"; diag "$(cat "$T/srv.out")"; diag_agent_logs; }
	fi
	# kill -9 every agent and every rank mid-job; wipe cleans every node
	(cd "$T" && exec timeout -k 5 60 "$LAMKIT" mpiexec -n 8 sleep 50 >/dev/null 2>&1) &
	job=$!
	for _ in $(seq 100); do [ "$(pgrep -fc '^sleep 50$')" -ge 8 ] && break; sleep 0.05; done
	ranks=$(pgrep -f '^sleep 50$' | tr '\n' ' ')
	is "$(echo $ranks | wc -w)" 8 "8 ranks running across the nodes"
	pids=$(agent_pids)
	kill -9 $pids
	kill -9 $job 2>/dev/null
	wait $job 2>/dev/null
	out=$(lk wipe 2>&1); rc=$?
	is "$rc" 0 "wipe after kill -9 of every agent"
	is "$(printf '%s\n' "$out" | grep -cE '^[0-9]+ +n[0-9] +yes ')" $K "wipe: a row per node"
	wait_gone 5 $ranks $pids; ok $? "no agent and no rank left"
	is "$(ls "$R" 2>/dev/null | wc -l)" 0 "no session files left"
	ok "$([ ! -e "$U" ]; echo $?)" "universe state removed"
fi

# grow: boot 3, add the 4th with the schema's ssh options
schema "$T/three.lua" windowed
sed -i "s/for i = 1, $K do/for i = 1, 3 do/" "$T/three.lua"
lk boot three.lua >/dev/null 2>&1; is $? 0 "boot 3 nodes"
out=$(lk grow --cpu 2 n4 2>&1); rc=$?
is "$rc" 0 "grow n4 over ssh"
like "$(grep '^node 4 ' "$U")" "^node 4 n4 $NETNS_SUBNET\.14 " "n4 joined at its address"
pids=$(agent_pids)
lk halt >/dev/null 2>&1; is $? 0 "halt 4 nodes"
wait_gone 5 $pids; ok $? "all gone"

# a node that cannot be reached: recon says so; boot fails at launch and halts the others
netns_block n3
out=$(lk recon windowed.lua 2>&1); rc=$?
is "$rc" 1 "recon with n3 down exits 1"
like "$out" "n3 +no +no " "recon: n3 not reachable"
is "$(printf '%s\n' "$out" | grep -cE 'n[124] +yes +yes ')" 3 "recon: the others are fine"
t0=$(date +%s)
out=$(lk boot windowed.lua 2>&1); rc=$?
dt=$(($(date +%s) - t0))
is "$rc" 1 "boot with n3 unreachable fails"
like "$out" "n3 failed at (launch|timeout): " "and names n3 and the stage"
ok "$([ "$dt" -le 20 ]; echo $?)" "within the timeout ($dt s)"
netns_unblock n3
sleep 0.3
is "$(ours)" 0 "the other nodes were halted; nothing left"

# a forged key on one node: auth, not retried
cat >"$T/badkey.sh" <<EOS
#!/bin/sh
read key
echo 1111111111111111111111111111111111111111111111111111111111111111 | exec "$LAMKIT" "\$@"
EOS
chmod +x "$T/badkey.sh"
schema "$T/forged.lua" windowed
sed -i "s/for i = 1, $K do/for i = 1, 3 do/" "$T/forged.lua"
echo "node \"n4\" { cpu = 2, program = \"$T/badkey.sh\" }" >>"$T/forged.lua"
out=$(lk boot forged.lua 2>&1); rc=$?
is "$rc" 1 "boot with a forged key fails"
like "$out" "n4 failed at auth: .*authentication failed" "n4 fails at auth"
sleep 0.3
is "$(ours)" 0 "nothing left running"
done_testing
