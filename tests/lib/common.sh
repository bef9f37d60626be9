# tests/lib/common.sh: shared helpers for integration tests (TAP output, temp dirs, cleanup).
# Source it first; it sets LAMKIT (default out/lamkit), T (a private temp dir, removed at exit)
# and provides ok/fail/is/like/skip_all/done_testing, and pids_gone to check cleanup.
set -u
: "${LAMKIT_TOP:=$(cd "$(dirname "$0")/../.." && pwd)}"
: "${LAMKIT:=$LAMKIT_TOP/out/lamkit}"
: "${LAMKIT_VARIANT:=musl}"
export LAMKIT
T=$(mktemp -d /tmp/lamkit-t.XXXXXX)
_tap_n=0 _tap_failed=0
_cleanups=()
at_exit() { _cleanups+=("$1"); }
_run_cleanups() {
	local i
	for ((i = ${#_cleanups[@]} - 1; i >= 0; i--)); do eval "${_cleanups[$i]}" || true; done
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
skip_all() { echo "$1"; exit 77; }
done_testing() { echo "1..$_tap_n"; [ "$_tap_failed" -eq 0 ]; exit $?; }
# pids_gone PID...: true when none of the pids exists any more (zombies of others count as gone)
pids_gone() {
	local p
	for p in "$@"; do
		[ -d "/proc/$p" ] && [ "$(awk '{print $3}' "/proc/$p/stat" 2>/dev/null)" != Z ] && return 1
	done
	return 0
}
