#!/bin/bash
# t0800: lamkit atollrun on this host: porttest (C, and C++ built here against out/include and
# out/lib) with 1, 2 and 8 processes, with and without connections and the connection test; a
# raw program that speaks the protocol by hand; a scripted fake process that checks every line
# the starter sends (the exact transcript of each ID, the single-process path) and misbehaves
# in each way the protocol can go wrong -> one line naming ID, host and step, exit 1, nothing
# left running; -l log files; machinefile and groupfile errors; progress lines with -v.
# timeout: 150
. "$(dirname "$0")/../lib/common.sh"
PT=$LAMKIT_TOP/out/examples/porttest
RAW=$LAMKIT_TOP/out/testprogs/atollrun_raw
[ -x "$PT" ] && [ -x "$RAW" ] || skip_all "porttest / atollrun_raw not built"
export HOME=$T/home # ~/.atollrun_machinefile, ~/.atollrun.log of this test only
mkdir -p "$HOME"
H=$(hostname)
cp "$LAMKIT_TOP/tests/atollrun/fake.sh" "$T/fake.sh"
ar() { (cd "$T" && timeout -k 5 60 "$LAMKIT" atollrun "$@"); }
# leftovers of this test: fake scripts and their sleeps, porttests
ours() { pgrep -f -- "$T/fake.sh|$PT|$T/ptxx|atollrun --exec.*($T/|$PT)" | grep -vx "$$" | wc -l; } # this run only

out=$(ar --help); ok $? "--help"
like "$out" "__YOUR_PORT_SINGLE__" "help explains the protocol: the single-process request"
like "$out" "__MY_PORT__<port> or __MY_PORT__FAILURE" "help: the port reply"
like "$out" "__FINISH_INIT__ -> __FINISHED_INIT__" "help: the last step"
out=$("$LAMKIT_TOP/out/atollrun" -p 1 "$PT" 2>&1); like "$out" "porttest: OK" "the atollrun symlink runs it"

# porttest: 1, 2, 8 processes; connections on (default), with the test, off
for n in 1 2 8; do
	for mode in "" --test --no-connect; do
		out=$(ar -p $n "$PT" $mode 2>&1); rc=$?
		is "$rc" 0 "porttest -p $n $mode exits 0"
		like "$out" "porttest: OK" "porttest -p $n $mode: OK"
		if [ "$mode" = --no-connect ]; then
			is "$(printf '%s\n' "$out" | grep -cE "^ID [0-9]+ port ([0-9.]+:[0-9]+|none)\$")" $n \
				"-p $n $mode: a decoded port per ID"
		else
			is "$(printf '%s\n' "$out" | grep -cE "^ID [0-9]+ on $H port ([0-9.]+:[0-9]+|none) peers $((n - 1))/$((n - 1))\$")" \
				$n "-p $n $mode: every ID exchanged data with all $((n - 1)) peers"
		fi
	done
done
out=$(ar -p 1 "$PT" --single-port 2>&1)
like "$out" "ID 0 on $H port [0-9.]+:[0-9]+ " "-p 1 with AcquirePortOnSingle: a real port"
out=$(ar -p 1 "$PT" 2>&1)
like "$out" "ID 0 on $H port none " "-p 1 without it: no port (__MY_PORT__0)"

out=$(env -u LAMKIT_ATOLLRUN "$PT" --single-port </dev/null 2>&1); rc=$?
is "$rc" 0 "porttest alone, without a starter"
like "$(echo $out)" "porttest: 1 process\(es\).* ID 0 on $H port [0-9.]+:[0-9]+ peers 0/0" "alone it is one process with ID 0"
out=$(ar -p 70000 "$PT" 2>&1); is "$?" 100 "-p above 4096: usage error"

# C++: the header-only class, built here like a user would
c++ -O2 -o "$T/ptxx" -I"$LAMKIT_TOP/out/include" "$LAMKIT_TOP/examples/atollrun/porttest.cc" \
	-L"$LAMKIT_TOP/out/lib" -latollrun
ok $? "porttest.cc builds against out/include and out/lib"
for n in 1 2 8; do
	out=$(ar -p $n "$T/ptxx" --test 2>&1); rc=$?
	is "$rc" 0 "porttest++ -p $n --test exits 0"
	like "$out" "porttest\+\+: OK \(no Atollrun process with ID $n\)" "-p $n: a bad ID throws AtollrunException"
	is "$(printf '%s\n' "$out" | grep -cE "^ID [0-9]+ of $n port [0-9.]+:[0-9]+\$")" $n "-p $n: a line per ID"
done

# The paper's own programs (its chapters 3.2 and 4.2, typed in as printed; only ID 0's output
# reaches stdout, so that is what the paper's session shows): "#Processes      = N", then one
# line per ID with its port, " <-- thats me :-)" on ID 0's. C++ prints the whole port; C casts
# it to int, the low 32 bits. Every port is ours: a TCP port and an address, all different.
PP=$LAMKIT_TOP/tests/atollrun/paper
c++ -o "$T/paper_cpp" -I"$LAMKIT_TOP/out/include" "$PP/porttest.cpp" -L"$LAMKIT_TOP/out/lib" -latollrun
ok $? "the paper's porttest.cpp builds with c++ against atollrun.h (the class) and libatollrun.a"
cc -o "$T/paper_c" -I"$LAMKIT_TOP/out/include" "$PP/porttest_c.c" -L"$LAMKIT_TOP/out/lib" -latollrun
ok $? "the paper's porttest_c.c builds with cc"
# paper_check OUTPUT N BITS: the lines as chapter 3's format, ports valid and distinct
paper_check() {
	local out=$1 n=$2 bits=$3 i=0 line p ports='' bad=''
	[ "$(printf '%s\n' "$out" | sed -n 1p)" = "#Processes      = $n" ] || bad="first line: $(printf '%s\n' "$out" | sed -n 1p)"
	[ "$(printf '%s\n' "$out" | wc -l)" = $((n + 1)) ] || bad="$bad; $(printf '%s\n' "$out" | wc -l) lines"
	while IFS= read -r line; do
		case $i in 0) want=" <-- thats me :-)" ;; *) want= ;; esac
		p=$(printf '%s\n' "$line" | sed -n "s/^Atollrun ID $i --> ATOLL Port = \(-\{0,1\}[0-9][0-9]*\)$want\$/\1/p")
		if [ -z "$p" ]; then bad="$bad; line of ID $i: '$line'"; else
			[ "$bits" = 32 ] && p=$((p & 0xffffffff))
			[ $((p & 0xffff)) -gt 0 ] && [ $((p >> 16)) -gt 0 ] || bad="$bad; ID $i: port $p is no endpoint"
			ports="$ports $p"
		fi
		i=$((i + 1))
	done < <(printf '%s\n' "$out" | sed 1d)
	[ "$(echo $ports | tr ' ' '\n' | sort -u | wc -l)" = "$n" ] || bad="$bad; ports not distinct:$ports"
	echo "${bad#; }"
}
for n in 1 4; do
	out=$(ar -p $n "$T/paper_cpp" 2>&1); rc=$?
	is "$rc" 0 "the paper's porttest.cpp -p $n exits 0"
	is "$(paper_check "$out" $n 64)" "" "porttest.cpp -p $n prints chapter 3's lines"
	out=$(ar -p $n "$T/paper_c" 2>&1); rc=$?
	is "$rc" 0 "the paper's porttest_c.c -p $n exits 0"
	is "$(paper_check "$out" $n 32)" "" "porttest_c.c -p $n prints the same lines (ports as int)"
done
out=$(ar -p 2 "$T/paper_cpp" 2>&1)
like "$(printf '%s\n' "$out" | sed -n 2p)" "^Atollrun ID 0 --> ATOLL Port = ([0-9]+) <-- thats me :-\)$" "ID 0 is the one that prints"
out=$(env -u LAMKIT_ATOLLRUN "$T/paper_cpp" </dev/null 2>&1)
is "$(paper_check "$out" 1 64)" "" "porttest.cpp without a starter: a single process with a port"

# a raw program: the protocol by hand on stdio, no library
out=$(ar -p 4 "$RAW" 2>&1); rc=$?
is "$rc" 0 "raw program, 4 processes"
is "$(printf '%s\n' "$out" | grep -cE '^raw: ID [0-3] port [0-9]+ tcp [0-9]+ on 127\.0\.0\.1$')" 4 \
	"raw: ID 0 got every port, intact"
unlike "$out" "raw: ID [123] of 4 done" "only ID 0's output reaches stdout"

# the scripted fake: every line the starter sends, per ID
D=$T/fake
fake() { rm -rf "$D"; mkdir -p "$D"; (cd "$T" && FAKE_DIR=$D timeout -k 5 60 "$LAMKIT" atollrun "$@"); }
out=$(fake -p 3 "$T/fake.sh" 2>"$T/err"); rc=$?
is "$rc" 0 "fake, 3 processes: the whole protocol"
for i in 0 1 2; do
	like "$(tr "\n" " " <"$D/$i.lines")" "^__YOUR_PORT__ __NUMBER_OF_PROCESSES__3 __YOUR_ID__$i (__REMOTE_PORT__[0-9]+ ){3}__INIT_CONNECTIONS__ __FINISH_INIT__ \$" \
		"ID $i received exactly: __YOUR_PORT__, count, its ID, 3 ports, __INIT_CONNECTIONS__, __FINISH_INIT__"
done
is "$(cat "$D"/0.lines | grep REMOTE | tr '\n' ' ')" "$(cat "$D"/2.lines | grep REMOTE | tr '\n' ' ')" \
	"every ID got the same port vector"
is "$(printf '%s\n' "$out" | grep -c 'before init')" 1 "ID 0's line before Atollrun init is shown (only ID 0's)"
like "$out" "fake ID 0 of 3: every line as expected" "ID 0's output after init"
unlike "$out" "fake ID [12] of" "the others' stdout is not shown"
is "$(grep -c 'a line on stderr' "$T/err")" 3 "every ID's stderr reaches stderr"
out=$(fake -p 1 "$T/fake.sh" 2>&1); rc=$?
is "$rc" 0 "fake, one process"
is "$(tr '\n' ' ' <"$D/0.lines" | sed 's/__REMOTE_PORT__[0-9]*/P/')" \
	"__YOUR_PORT_SINGLE__ __NUMBER_OF_PROCESSES__1 __YOUR_ID__0 P __INIT_CONNECTIONS__ __FINISH_INIT__ " \
	"one process: __YOUR_PORT_SINGLE__ and a vector of one"
out=$(FAKE_STATUS=IGNORED fake -p 2 "$T/fake.sh" 2>&1)
is "$?" 0 "__INIT_STATUS__IGNORED is accepted"

# each way init can fail: one line with ID, host and step; exit 1; nothing left
failcase() { # failcase MODE REGEX DESCRIPTION [atollrun args]
	local mode=$1 re=$2 desc=$3 t0
	shift 3
	t0=$(date +%s)
	out=$(FAKE_MODE=$mode fake --timeout 3 -p 3 "$@" "$T/fake.sh" 2>&1); rc=$?
	dt=$(($(date +%s) - t0))
	is "$rc" 1 "$desc: exit 1"
	like "$out" "^atollrun: ID [0-2] on $H failed at $re; ending all 3 process\(es\)\$" "$desc: one line naming ID, host and step"
	is "$(printf '%s\n' "$out" | grep -c '^atollrun:')" 1 "$desc: exactly one line"
	sleep 0.2
	is "$(ours)" 0 "$desc: nothing left running (${dt} s)"
}
failcase port_failure "requesting ports: it replied __MY_PORT__FAILURE .*" "a FAILURE port reply"
failcase before_init "waiting for processes: it ended before sending __ATOLLRUN_INIT__; exit status 4; its last error line: fake: giving up before init" \
	"a process that exits before init"
failcase garbage "propagating network info: 'this is not the protocol' out of order \(expected __PORT_VECTOR_ACCEPTED__\)" \
	"garbage instead of a reply"
failcase out_of_order "propagating network info: '__FINISHED_INIT__' out of order \(expected __PORT_VECTOR_ACCEPTED__\)" \
	"a protocol line out of order"
failcase status_failure "initializing connections: it replied __INIT_STATUS__FAILURE .*" "__INIT_STATUS__FAILURE"
failcase die "initializing connections: it ended during the init protocol \(no __INIT_STATUS__\); exit status 5; its last error line: fake ID 1: dying mid-protocol" \
	"a process that dies mid-protocol"
failcase silent "finishing init procedure: no __FINISHED_INIT__ within 3 s" "a silent process"
ok "$([ "$dt" -le 10 ]; echo $?)" "the silent one is caught after the 3 s timeout ($dt s)"
pids_gone $(cat "$D/pids"); ok $? "its sleeping child is gone too"
out=$(FAKE_MODE=silent LAMKIT_ATOLLRUN_TIMEOUT=2 fake -p 2 "$T/fake.sh" 2>&1)
like "$out" "no __FINISHED_INIT__ within 2 s" "LAMKIT_ATOLLRUN_TIMEOUT sets the timeout"
out=$(fake --timeout 2 -p 2 sleep 30 2>&1); rc=$?
like "$out" "^atollrun: ID 0 on $H failed at waiting for processes: no __ATOLLRUN_INIT__ within 2 s \(and 1 more\)" \
	"a program that never speaks the protocol"

# after init: a process that fails ends the others; its status is the exit status
# (no connections: with them ID 0 sees ID 2 vanish and may fail first, with its own status)
out=$(ar -p 4 "$PT" --no-connect --fail-at-id 2 2>&1); rc=$?
is "$rc" 3 "a process failing after init: its exit status"
like "$out" "atollrun: ID 2 on $H ended badly; exit status 3" "and it is named"
sleep 0.2
is "$(ours)" 0 "the others were ended"

# -l: per-ID log files
out=$(fake -l -p 3 "$T/fake.sh" 2>/dev/null)
for i in 0 1 2; do
	like "$(cat "$HOME/.atollrun.log/$i.log" 2>/dev/null | tr '\n' ' ')" \
		"fake ID $i of 3: every line as expected.*fake ID $i: a line on stderr|fake ID $i: a line on stderr.*fake ID $i of 3" \
		"-l: ID $i's output and stderr in ~/.atollrun.log/$i.log"
done
unlike "$(cat "$HOME/.atollrun.log/1.log")" "__" "no protocol lines in the logs"

# machinefile and groupfile
printf 'localhost\n# a comment\n\n%s\n' "$H" >"$T/mf"
out=$(ar -v -m "$T/mf" -p 3 "$PT" 2>&1); like "$out" "porttest: OK" "-m with this host's names runs locally"
# the paper's session log (its chapter 2.3), with lamkit's name in the brackets
like "$out" "^\[atollrun\] >>> SCANNING COMMAND LINE\.\.\.
\[atollrun\] processes      = 3
\[atollrun\] machinefile    = $T/mf
" "-v: the command line as the paper's session shows it"
like "$out" "\[atollrun\] mapped ID 0 --> localhost
\[atollrun\] mapped ID 1 --> localhost
\[atollrun\] mapped ID 2 --> $H
\[atollrun\] >>> CONNECTING MACHINES\.\.\.
\[atollrun\] connecting ID 0 \.\.\. \[local     \] \.\.\. NO AUTHENTICATION" "-v: mapping and connecting"
like "$out" "\[atollrun\] >>> PERFORM INITIALIZATION\.\.\.
\[atollrun\] requesting ports \.{11}( [0-2]){3} --- OK
\[atollrun\] propagating network info \.{3}( [0-2]){3} --- OK
\[atollrun\] initializing connections \.{3}( [0-2]){3} --- OK
\[atollrun\] checking results \.{11} 0 1 2 --- OK
\[atollrun\] finishing init procedure \.{3}( [0-2]){3} --- OK
\[atollrun\] init of 3 process\(es\) finished in [0-9.]+ s
\[atollrun\] >>> OBSERVING PROGRAMS\.\.\.
porttest: 3 process" "-v: the init steps as the paper's log, then the program's output"
like "$out" "\[atollrun\] ID 2 has finished
\[atollrun\] >>> CLEANUP CONNECTIONS\.\.\.\$" "-v: each ID's end, then the cleanup"
out=$(ar -v -m "$T/mf" -p 2 "$PT" --no-connect 2>&1)
like "$out" "checking results \.{11} 0 1 --- IGNORED" "-v: __INIT_STATUS__IGNORED shows as the paper's IGNORED"
out=$(ar -p 2 "$PT" 2>&1); unlike "$out" "--- OK" "no progress lines when stdout is no terminal"
printf 'localhost\nbad host\n' >"$T/badmf"
out=$(ar -m "$T/badmf" -p 2 "$PT" 2>&1); rc=$?
is "$rc" 100 "a bad machinefile line: exit 100"
like "$out" "^atollrun: $T/badmf:2: 'bad host' is not a host name" "and names file:line"
out=$(ar -m "$T/nope" -p 2 "$PT" 2>&1); like "$out" "$T/nope: No such file" "a missing -m file"
printf 'localhost\n' >"$HOME/.atollrun_machinefile"
out=$(ar -p 2 "$PT" 2>&1); like "$out" "porttest: OK" "~/.atollrun_machinefile is read by default"
echo 'nohost.invalid' >"$HOME/.atollrun_machinefile"
out=$(ar --rsh="$T/nossh" -p 2 "$PT" 2>&1); rc=$?
like "$out" "no '$T/nossh' client found" "--rsh= with a missing remote shell: one line, nothing started"
mkdir -p "$T/bin"
printf '#!/bin/sh\necho "$*" >>"%s/rsh.args"\nexit 1\n' "$T" >"$T/bin/rsh"; chmod +x "$T/bin/rsh"
out=$(PATH="$T/bin:$PATH" ar -r -p 2 "$PT" 2>&1); rc=$?
like "$(cat "$T/rsh.args" 2>/dev/null)" "^(-[^ ]+ )*nohost.invalid " "-r (the paper's flag, no value): rsh reaches the other host"
is "$rc" 1 "-r: the failed rsh start is one failure, exit 1"
rm -f "$HOME/.atollrun_machinefile"
printf 'g1: localhost, %s\ng2: a,b\n' "$H" >"$T/gf"
out=$(ar -v -g "$T/gf" -p 2 "$PT" 2>&1); like "$out" "\[atollrun\] >>> READING GROUP FILE\.\.\.
\[atollrun\] found 2 group\(s\)" "-g: a groupfile is read and checked"
printf 'g1 localhost\n' >"$T/badgf"
out=$(ar -g "$T/badgf" -p 2 "$PT" 2>&1); rc=$?
like "$out" "$T/badgf:1: want 'NAME: host, host \.\.\.'" "a bad groupfile names file:line"
out=$(ar "$PT" 2>&1); rc=$?
is "$rc" 0 "no -p: one process, the paper's default"
like "$out" "porttest: 1 process\(es\)" "no -p: porttest ran as one process"
out=$(ar -p 2 "$T/missing-program" 2>&1); rc=$?
like "$out" "atollrun: ID 0 on $H: cannot run $T/missing-program: No such file" "a program that does not exist"
is "$(ours)" 0 "nothing left running at the end"
done_testing
