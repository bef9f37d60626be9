# tests/lib/common.sh: shared helpers for integration tests (TAP output, temp dirs, cleanup).
# Source it first; it sets LAMKIT (default out/lamkit), T (a private temp dir, removed at exit)
# and provides ok/fail/is/like/skip_all/done_testing, and pids_gone to check cleanup.
set -u
: "${LAMKIT_TOP:=$(cd "$(dirname "$0")/../.." && pwd)}"
: "${LAMKIT:=$LAMKIT_TOP/out/lamkit}"
: "${LAMKIT_VARIANT:=musl}"
export LAMKIT
T=$(mktemp -d /tmp/lamkit-t.XXXXXX)
export LAMKIT_TMPDIR="$T/tmp" # session directories of this test only
mkdir -p "$LAMKIT_TMPDIR"
_tap_n=0 _tap_failed=0
_cleanups=()
at_exit() { _cleanups+=("$1"); }
_run_cleanups() {
	# a name no cleanup uses: the eval'd text runs in this function's scope (t0360's loops over
	# i had moved the index to a SysV id, so the rest of the cleanups and rm -rf "$T" never ran)
	local _ci
	for ((_ci = ${#_cleanups[@]} - 1; _ci >= 0; _ci--)); do eval "${_cleanups[$_ci]}" || true; done
	rm -rf "$T"
}
trap _run_cleanups EXIT
trap 'exit 130' INT TERM

ok() { # ok COND-EXIT-STATUS DESCRIPTION  (use: cmd; ok $? "desc")
	_tap_n=$((_tap_n + 1))
	if [ "$1" -eq 0 ]; then echo "ok $_tap_n - $2"; else
		echo "not ok $_tap_n - $2"; _tap_failed=$((_tap_failed + 1)); fi
}
is() { # is GOT WANT DESCRIPTION
	if [ "$1" = "$2" ]; then ok 0 "$3"; else ok 1 "$3"; echo "#   got:  '$1'"; echo "#   want: '$2'"; fi
}
like() { # like TEXT EXTENDED-REGEX DESCRIPTION
	if printf '%s' "$1" | grep -Eq -- "$2"; then ok 0 "$3"; else
		ok 1 "$3"; echo "#   text: '$(printf '%s' "$1" | head -c 600)'"; echo "#   want match: /$2/"; fi
}
unlike() {
	if printf '%s' "$1" | grep -Eq -- "$2"; then ok 1 "$3"; echo "#   text: '$(printf '%s' "$1" | head -c 600)'"; else ok 0 "$3"; fi
}
# diag TEXT: print TEXT as TAP comments (at most 40 lines), to show why a check failed
diag() { printf '%s\n' "$1" | head -n 40 | sed 's/^/#   /'; }
# diag_agent_logs: the logs of this test's agents (each agent writes one into its session
# directory, removed when it exits cleanly), so a failure shows what the agents said
diag_agent_logs() {
	local f
	for f in $(find "$LAMKIT_TMPDIR" -name log -type f 2>/dev/null); do
		echo "#   --- $f"; tail -n 30 "$f" | sed 's/^/#   /'
	done
}
skip_all() { echo "$1"; exit 77; }
done_testing() { echo "1..$_tap_n"; [ "$_tap_failed" -eq 0 ]; exit $?; }
# lkmpi_leaked BEFORE: lamkit MPI segments in /dev/shm that are not in BEFORE (an earlier
# `ls /dev/shm | grep '^lkmpi-' | sort`) and whose maker is gone. Every name carries its maker's
# pid (lkmpi-a<job>-<agent pid>, lkmpi-<job>-<rank>-<pid>, lkmpi-win-<pid>-<n>; a pair segment
# between two jobs, lkmpi-x<uid>-<uid>-<pid>-<pid>, both); a segment whose maker still runs
# belongs to a job still running, this machine's other tests' included.
lkmpi_leaked() {
	local n p
	ls /dev/shm | grep '^lkmpi-' | sort | comm -13 <(echo "$1") - | while read -r n; do
		case $n in
		lkmpi-win-*) p=${n#lkmpi-win-}; p=${p%%-*} ;;
		lkmpi-x*) p=${n%-*}; p="${p##*-} ${n##*-}" ;;
		*) p=${n##*-} ;;
		esac
		# shellcheck disable=SC2086
		pids_gone $p && echo "$n"
	done | tr '\n' ' '
}
# pids_gone PID...: true when none of the pids exists any more (zombies of others count as gone)
pids_gone() {
	local p
	for p in "$@"; do
		[ -d "/proc/$p" ] && [ "$(awk '{print $3}' "/proc/$p/stat" 2>/dev/null)" != Z ] && return 1
	done
	return 0
}

# MPI test programs built by tests/mpi/build.sh (tests/run builds them into out/mpi).
MPI_BIN="$LAMKIT_TOP/out/mpi"
need_mpich() { [ -x "$MPI_BIN/mpich/hello" ] || skip_all "MPICH test programs not built (tests/mpi/build.sh)"; }
need_openmpi() { [ -x "$MPI_BIN/openmpi/hello" ] || skip_all "Open MPI test programs not built"; }
# lkx ARGS...: lamkit mpiexec with a safety timeout, from the test's temp dir
lkx() { (cd "$T" && timeout -k 5 "${LKX_TIMEOUT:-60}" "$LAMKIT" mpiexec "$@"); }
# wait_gone SECONDS PID...: wait until the pids are gone; true if they all went
wait_gone() {
	local t=$1 i
	shift
	for ((i = 0; i < t * 20; i++)); do pids_gone "$@" && return 0; sleep 0.05; done
	pids_gone "$@"
}
