# tests/lib/chaos.sh: start chaos-relay processes from a test, read their counters, stop them.
# shellcheck shell=bash
#
# Source it from a bash test (after tests/lib/common.sh, and tests/lib/netns.sh to run relays on
# nodes); see doc/HACKING.md, "Nodes with two routes, and the chaos relay".
#     . tests/lib/chaos.sh
#     at_exit chaos_stop_all
#     chaos_start r0 --listen "$(netns_route_gw 1):0" --to "$NETNS_ADDR2_n2:7001" --drop 0.05
#     port=$(chaos_port r0 0)                  # the port pair 0 got
#     chaos_stat r0 0 forwarded                # a fresh counter (SIGUSR1, waits for the report)
#     CHAOS_EXEC="netns_exec n2" chaos_start r1 ...   # a relay inside node n2
#     chaos_stop r0                            # SIGTERM; its final counters stay readable
# Functions return non-zero with one line on stderr when a relay does not start, answer or stop.
# CHAOS_RELAY  the binary (default: $LAMKIT_TOP/out/testprogs/chaos-relay, out/asan/... when
#              LAMKIT_VARIANT=asan)
# CHAOS_DIR    ready/stats/stderr files (default: a temp dir, removed by chaos_stop_all)
# CHAOS_LIFETIME  --lifetime of every relay (default 300): a relay outlives no test by long.

if [ -z "${CHAOS_RELAY:-}" ]; then
	if [ "${LAMKIT_VARIANT:-musl}" = asan ]; then
		CHAOS_RELAY=${LAMKIT_TOP:-.}/out/asan/testprogs/chaos-relay
	else
		CHAOS_RELAY=${LAMKIT_TOP:-.}/out/testprogs/chaos-relay
	fi
fi
declare -A _chaos_pid=() _chaos_job=()
_chaos_own_dir=

# _chaos_field FILE REGEX-KEY: the value of " KEY=" on the first line of FILE.
_chaos_head() { sed -n "1s/.* $2=\\([^ ]*\\).*/\\1/p" "$1" 2>/dev/null; }

chaos_start() {
	local name=$1 i pid
	shift
	if [ -z "${CHAOS_DIR:-}" ]; then
		CHAOS_DIR=$(mktemp -d /tmp/lkchaos.XXXXXX) || return 1
		_chaos_own_dir=$CHAOS_DIR
	fi
	[ -x "$CHAOS_RELAY" ] || { echo "chaos: no relay binary $CHAOS_RELAY (packaging/build)" >&2; return 1; }
	rm -f "$CHAOS_DIR/$name".*
	# shellcheck disable=SC2086 # CHAOS_EXEC is a command prefix, meant to be split
	${CHAOS_EXEC:-} "$CHAOS_RELAY" --lifetime "${CHAOS_LIFETIME:-300}" "$@" --ready "$CHAOS_DIR/$name.ready" \
		--stats "$CHAOS_DIR/$name.stats" </dev/null >/dev/null 2>"$CHAOS_DIR/$name.err" &
	_chaos_job[$name]=$!
	for ((i = 0; i < 500; i++)); do
		# the relay's own pid (with CHAOS_EXEC, $! may be a shell around it)
		pid=$(_chaos_head "$CHAOS_DIR/$name.ready" pid)
		[ -n "$pid" ] && _chaos_pid[$name]=$pid && return 0
		kill -0 "${_chaos_job[$name]}" 2>/dev/null || break
		sleep 0.01
	done
	echo "chaos: relay $name did not start: $(head -n 3 "$CHAOS_DIR/$name.err" 2>/dev/null)" >&2
	kill -KILL "${_chaos_job[$name]}" 2>/dev/null
	wait "${_chaos_job[$name]}" 2>/dev/null
	unset "_chaos_job[$name]"
	return 1
}

# chaos_port NAME PAIR: the port pair PAIR of relay NAME listens on.
chaos_port() {
	sed -n "s/^pair=$2 listen=[0-9.]*:\\([0-9]*\\) .*/\\1/p" "$CHAOS_DIR/$1.ready" 2>/dev/null
}

# chaos_stat NAME PAIR KEY: counter KEY of pair PAIR; a running relay is asked for a fresh report
# first (SIGUSR1, up to 5 s), a stopped one gives its final counters.
chaos_stat() {
	local name=$1 f=$CHAOS_DIR/$1.stats pid=${_chaos_pid[$1]:-} before i
	if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
		before=$(_chaos_head "$f" report)
		kill -USR1 "$pid" || return 1
		for ((i = 0; i < 500; i++)); do
			[ "$(_chaos_head "$f" report)" != "$before" ] && break
			sleep 0.01
		done
		[ "$(_chaos_head "$f" report)" != "$before" ] || { echo "chaos: relay $name wrote no report" >&2; return 1; }
	fi
	sed -n "s/^pair=$2 .* $3=\\([0-9]*\\).*/\\1/p" "$f" 2>/dev/null
}

# chaos_stop NAME: SIGTERM, wait 5 s (then SIGKILL); true if it exited by itself.
chaos_stop() {
	local name=$1 pid=${_chaos_pid[$1]:-} i rc=0
	[ -n "$pid" ] || return 0
	kill -TERM "$pid" 2>/dev/null
	for ((i = 0; i < 500; i++)); do
		kill -0 "$pid" 2>/dev/null || break
		[ "$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null)" = Z ] && break
		sleep 0.01
	done
	if kill -0 "$pid" 2>/dev/null && [ "$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null)" != Z ]; then
		echo "chaos: relay $name ignored SIGTERM for 5 s: killed" >&2
		kill -KILL "$pid" 2>/dev/null
		rc=1
	fi
	wait "${_chaos_job[$name]}" 2>/dev/null
	unset "_chaos_pid[$name]" "_chaos_job[$name]"
	return $rc
}

# chaos_stop_all: stop every relay this shell started; remove CHAOS_DIR if chaos_start made it.
chaos_stop_all() {
	local name
	for name in "${!_chaos_pid[@]}"; do chaos_stop "$name"; done
	[ -n "$_chaos_own_dir" ] && rm -rf "$_chaos_own_dir" && CHAOS_DIR='' _chaos_own_dir=''
	return 0
}
