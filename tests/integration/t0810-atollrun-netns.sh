#!/bin/bash
# t0810: lamkit atollrun across 4 namespace "nodes" over real ssh (-m machinefile, --rsh= with the
# test's ssh config): porttest (C and C++) with 2 and 8 processes, with and without connections
# and the connection test (every pair of processes on different nodes exchanges data over the
# TCP ports the protocol carried); the raw program; -l logs; failures on a remote node (a
# FAILURE reply, death mid-protocol, silence, an unreachable node) name ID, host and step and
# leave nothing running on any node; with a booted universe and no -m its nodes and boot module
# start the processes. Prints the init time of 8 processes next to a lamkit
# mpiexec -n 8 hello on the same nodes.
# timeout: 240
. "$(dirname "$0")/../lib/common.sh"
[ "$(id -u)" = 0 ] || skip_all "needs root (network namespaces)"
command -v sshd >/dev/null || [ -x /usr/sbin/sshd ] || skip_all "no sshd"
PT=$LAMKIT_TOP/out/examples/porttest
RAW=$LAMKIT_TOP/out/testprogs/atollrun_raw
[ -x "$PT" ] && [ -x "$RAW" ] || skip_all "porttest / atollrun_raw not built"
. "$LAMKIT_TOP/tests/lib/netns.sh"
at_exit netns_down
K=4
netns_up $K || { ok 1 "netns_up $K"; done_testing; }
export HOME=$T/home
mkdir -p "$HOME"
H=$(hostname)
RSH="ssh -F $NETNS_SSH_CONFIG"
printf 'n%s\n' $(seq $K) >"$T/mf"
cp "$LAMKIT_TOP/tests/atollrun/fake.sh" "$T/fake.sh"
ar() { (cd "$T" && timeout -k 5 90 "$LAMKIT" atollrun -m "$T/mf" --rsh="$RSH" "$@"); }
ours() { pgrep -f -- "$T/fake.sh|$PT|$T/ptxx|$RAW|atollrun --exec.*($T/|$PT|$RAW)" | wc -l; } # this run only
host_of() { case $1 in 0) echo "$H" ;; *) echo "n$(((($1 - 1) % K) + 1))" ;; esac; }

for n in 2 8; do
	for mode in "" --test --no-connect; do
		out=$(ar -p $n "$PT" $mode 2>&1); rc=$?
		is "$rc" 0 "porttest -p $n $mode across the nodes exits 0"
		like "$out" "porttest: OK" "porttest -p $n $mode: OK"
		if [ "$mode" != --no-connect ]; then
			for ((i = 0; i < n; i++)); do
				like "$out" "ID $i on $(host_of $i) port [0-9.]+:[0-9]+ peers $((n - 1))/$((n - 1))" \
					"-p $n $mode: ID $i ran on $(host_of $i) and reached all $((n - 1)) peers"
			done
		else
			is "$(printf '%s\n' "$out" | grep -cE '^ID [0-9]+ port [0-9.]+:[0-9]+$')" $n "-p $n $mode: every port"
		fi
	done
done
out=$(ar -p 8 "$PT" 2>&1)
like "$out" "ID 1 on n1 port $NETNS_SUBNET\.11:[0-9]+ " "a node's port is the address ssh reached it on"

c++ -O2 -o "$T/ptxx" -I"$LAMKIT_TOP/out/include" "$LAMKIT_TOP/examples/atollrun/porttest.cc" \
	-L"$LAMKIT_TOP/out/lib" -latollrun
ok $? "porttest.cc builds"
for mode in "" --test; do
	out=$(ar -p 8 "$T/ptxx" $mode 2>&1); rc=$?
	is "$rc" 0 "porttest++ -p 8 $mode across the nodes"
	is "$(printf '%s\n' "$out" | grep -cE '^ID [0-7] of 8 port [0-9.]+:[0-9]+$')" 8 "porttest++ $mode: a line from every ID"
done

out=$(ar -p 5 "$RAW" 2>&1); rc=$?
is "$rc" 0 "the raw program on 5 processes across the nodes"
is "$(printf '%s\n' "$out" | grep -c '^raw: ID [0-4] port ')" 5 "raw: ID 0 got 5 ports"

mkdir -p "$T/fd"
out=$(cd "$T" && FAKE_DIR=$T/fd timeout 60 "$LAMKIT" atollrun -l -m "$T/mf" --rsh="$RSH" -p 5 \
	env FAKE_DIR="$T/fd" "$T/fake.sh" 2>/dev/null); rc=$?
is "$rc" 0 "the scripted fake on 5 processes across the nodes"
for i in 1 4; do
	like "$(tr '\n' ' ' <"$T/fd/$i.lines")" \
		"^__YOUR_PORT__ __NUMBER_OF_PROCESSES__5 __YOUR_ID__$i (__REMOTE_PORT__[0-9]+ ){5}__INIT_CONNECTIONS__ __FINISH_INIT__ \$" \
		"ID $i on $(host_of $i) received exactly the protocol's lines"
	like "$(cat "$HOME/.atollrun.log/$i.log")" "fake ID $i: a line on stderr" "-l: ID $i's remote stderr in its log"
done

# failures on remote nodes; everything ended on every node
failcase() { # failcase MODE FAULT-ID REGEX DESCRIPTION
	local mode=$1 id=$2 re=$3 desc=$4
	rm -rf "$T/fd" && mkdir -p "$T/fd"
	out=$(cd "$T" && timeout 60 "$LAMKIT" atollrun --timeout 4 -m "$T/mf" --rsh="$RSH" -p 5 \
		env FAKE_DIR="$T/fd" FAKE_MODE=$mode FAKE_ID=$id "$T/fake.sh" 2>&1); rc=$?
	is "$rc" 1 "$desc: exit 1"
	like "$out" "^atollrun: ID $id on $(host_of $id) failed at $re; ending all 5 process\(es\)\$" \
		"$desc: one line naming ID $id, $(host_of $id) and the step"
	sleep 0.5
	is "$(ours)" 0 "$desc: nothing left running on any node"
}
failcase status_failure 2 "initializing connections: it replied __INIT_STATUS__FAILURE .*" \
	"__INIT_STATUS__FAILURE on n2"
failcase die 3 "initializing connections: it ended during the init protocol \(no __INIT_STATUS__\); exit status 5.*" \
	"death mid-protocol on n3"
failcase silent 4 "finishing init procedure: no __FINISHED_INIT__ within 4 s" "silence on n4"
pids_gone $(cat "$T/fd/pids" 2>/dev/null); ok $? "the silent process's child on n4 is gone"
failcase garbage 1 "propagating network info: 'this is not the protocol' out of order.*" "garbage on n1"

# a node that cannot be reached: ssh fails within the timeout, the others are ended
netns_block n3
t0=$(date +%s)
out=$(ar --timeout 5 -p 5 "$PT" 2>&1); rc=$?
dt=$(($(date +%s) - t0))
netns_unblock n3
is "$rc" 1 "n3 unreachable: exit 1"
like "$out" "^atollrun: ID 3 on n3 failed at waiting for processes: " "names ID 3 on n3 at the first step"
ok "$([ "$dt" -le 15 ]; echo $?)" "within the timeout ($dt s)"
sleep 0.5
is "$(ours)" 0 "nothing left running"

# init time of 8 processes on the nodes, and lamkit mpiexec -n 8 of an MPI hello on them
out=$(ar -v -p 8 "$PT" 2>&1)
at=$(printf '%s\n' "$out" | sed -n 's/^\[atollrun\] init of 8 process(es) finished in \([0-9.]*\) s$/\1/p')
like "$at" "^[0-9.]+$" "-v reports the init time of 8 processes"
HELLO=$LAMKIT_TOP/out/mpi-lamkit/hello
{
	echo "boot = \"ssh\"; algorithm = \"windowed\"; timeout = 30"
	echo "ssh = { options = { \"-F\", \"$NETNS_SSH_CONFIG\" }, verify = false }"
	echo "defaults = { program = \"$LAMKIT\" }"
	echo "for i = 1, $K do node(\"n\" .. i) { cpu = 2 } end"
} >"$T/u.lua"
U="$LAMKIT_TMPDIR/lamkit-$(id -u)/universe"
at_exit '[ -f "$U" ] && timeout 30 "$LAMKIT" wipe >/dev/null 2>&1'
b0=$(date +%s%N)
(cd "$T" && timeout 60 "$LAMKIT" boot u.lua >/dev/null 2>&1); ok $? "boot a universe on the 4 nodes"
m0=$(date +%s%N)
out=$(LKX_TIMEOUT=60 lkx -n 8 "$HELLO" 2>&1); rc=$?
m1=$(date +%s%N)
is "$rc" 0 "lamkit mpiexec -n 8 hello on the same nodes"
# with a universe booted and no machinefile, its nodes and boot module start the processes
out=$(cd / && timeout 60 "$LAMKIT" atollrun -v -p 5 "$PT" --test 2>&1); rc=$?
is "$rc" 0 "no -m: porttest -p 5 on the booted universe's nodes"
like "$out" "found 4 node\(s\) in the booted universe \(ssh\)" "-v says the universe's nodes are used"
for i in 1 2 3 4; do
	like "$out" "ID $i on n$i port $NETNS_SUBNET\.$((10 + i)):[0-9]+ peers 4/4" "universe: ID $i on n$i"
done
out=$(cd / && LAMKIT_UNIVERSE=none timeout 60 "$LAMKIT" atollrun -p 2 "$PT" 2>&1)
like "$out" "ID 1 on $H " "LAMKIT_UNIVERSE=none: all on this host"
(cd "$T" && timeout 30 "$LAMKIT" halt >/dev/null 2>&1)
echo "# load $(cut -d' ' -f1-3 /proc/loadavg): atollrun -p 8 (7 over ssh) init ${at} s;" \
	"mpiexec -n 8 hello $(((m1 - m0) / 1000000)) ms in a booted universe (boot $(((m0 - b0) / 1000000)) ms)"
is "$(ours)" 0 "nothing left running at the end"
done_testing
