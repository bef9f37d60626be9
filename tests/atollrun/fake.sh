#!/bin/bash
# tests/atollrun/fake.sh: a scripted Atollrun process. It speaks the process side of the init
# protocol by hand, checks every line the starter sends (exact text, order, its own port back in
# the vector at its ID), writes what it received to $FAKE_DIR/<ID>.lines, and misbehaves as
# FAKE_MODE says:
#   ok              the whole protocol; __INIT_STATUS__$FAKE_STATUS (SUCCESS); then exits $FAKE_EXIT
#   port_failure    the first process to get there replies __MY_PORT__FAILURE
#   before_init     the first process to get there exits 4 before __ATOLLRUN_INIT__
#   garbage         ID $FAKE_ID prints garbage instead of __PORT_VECTOR_ACCEPTED__
#   out_of_order    ID $FAKE_ID replies __FINISHED_INIT__ to the port vector
#   status_failure  ID $FAKE_ID replies __INIT_STATUS__FAILURE
#   die             ID $FAKE_ID exits 5 on __INIT_CONNECTIONS__
#   silent          ID $FAKE_ID never answers __FINISH_INIT__ (sleeps; its pid goes to $FAKE_DIR/pids)
# A line it did not expect: "FAKE-BAD: ..." on stderr and exit 9.
set -u
mode=${FAKE_MODE:-ok}
dir=${FAKE_DIR:?}
fault=${FAKE_ID:-1}
port=$(($$ + 70000)) # any number the starter must give back unchanged
id=

bad() { echo "FAKE-BAD: $*" >&2; exit 9; }
first() { mkdir "$dir/fault" 2>/dev/null; } # true for the first process only
get() { # get EXPECTED-REGEX: read one line, check it, record it
	local l
	IFS= read -r -t 120 l || bad "no line from the starter (wanted $1)"
	[[ $l =~ ^$1$ ]] || bad "got '$l', wanted /$1/"
	echo "$l" >>"$dir/${id:-pid$$}.lines"
	line=$l
}

echo "fake pid $$ before init (printed before the protocol)"
[ "$mode" = before_init ] && first && { echo "fake: giving up before init" >&2; exit 4; }
echo "__ATOLLRUN_INIT__"
get "__YOUR_PORT(_SINGLE)?__"
if [ "$mode" = port_failure ] && first; then echo "__MY_PORT__FAILURE"; exec sleep 60; fi
echo "__MY_PORT__$port"
get "__NUMBER_OF_PROCESSES__[0-9]+"
n=${line#__NUMBER_OF_PROCESSES__}
get "__YOUR_ID__[0-9]+"
id=${line#__YOUR_ID__}
mv "$dir/pid$$.lines" "$dir/$id.lines"
for ((j = 0; j < n; j++)); do
	get "__REMOTE_PORT__[0-9]+"
	[ $j = "$id" ] && [ "${line#__REMOTE_PORT__}" != $port ] && bad "my port came back as $line"
done
if [ "$id" = "$fault" ]; then
	case $mode in
	garbage) echo "this is not the protocol"; exec sleep 60 ;;
	out_of_order) echo "__FINISHED_INIT__"; exec sleep 60 ;;
	esac
fi
echo "__PORT_VECTOR_ACCEPTED__"
get "__INIT_CONNECTIONS__"
if [ "$id" = "$fault" ]; then
	case $mode in
	status_failure) echo "__INIT_STATUS__FAILURE"; exec sleep 60 ;;
	die) echo "fake ID $id: dying mid-protocol" >&2; exit 5 ;;
	esac
fi
echo "__INIT_STATUS__${FAKE_STATUS:-SUCCESS}"
get "__FINISH_INIT__"
if [ "$mode" = silent ] && [ "$id" = "$fault" ]; then
	sleep 300 &
	echo $! >>"$dir/pids"
	wait
fi
echo "__FINISHED_INIT__"
echo "fake ID $id of $n: every line as expected"
echo "fake ID $id: a line on stderr" >&2
exit "${FAKE_EXIT:-0}"
