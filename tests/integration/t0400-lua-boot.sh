#!/bin/bash
# t0400: the Lua side of booting: schema loading (Lua DSL and bhost), boot modules (argv for
# ssh/rsh/slurm/local, allocation, verification), launch algorithms in virtual time (hop counts,
# failures, timeouts) and the boot driver, all run from the scripts embedded in the binary.
# timeout: 60
. "$(dirname "$0")/../lib/common.sh"
unset LAMKIT_LUA_PATH LAMKIT_BOOT LAMKIT_HOME SLURM_JOB_ID SLURM_JOBID SLURM_JOB_NODELIST \
	SLURM_NODELIST SLURM_JOB_CPUS_PER_NODE

# the binary embeds the scripts in this tree (a stale build would test old code)
"$LAMKIT" lua-dump "$T/dump" >/dev/null; ok $? "lua-dump"
stale=
for f in $(cd "$LAMKIT_TOP/lua" && ls schema.lua boot.lua boot/*.lua alg/*.lua); do
	cmp -s "$T/dump/lua/$f" "$LAMKIT_TOP/lua/$f" || stale="$stale $f"
done
is "$stale" "" "every boot script is embedded and current"

# run_lua NAME: run tests/lua/NAME.lua in its own directory; its ok/not ok lines become ours.
run_lua() {
	local name=$1 dir="$T/$1" out rc line
	mkdir -p "$dir"
	out=$(cd "$dir" && "$LAMKIT" lua "$LAMKIT_TOP/tests/lua/$name.lua" "$dir" "$LAMKIT_TOP" 2>&1)
	rc=$?
	while IFS= read -r line; do
		case $line in
		"ok - "*) ok 0 "$name: ${line#ok - }" ;;
		"not ok - "*) ok 1 "$name: ${line#not ok - }" ;;
		"#"*) echo "$line" ;;
		*) echo "# $line" ;;
		esac
	done <<<"$out"
	is "$rc" 0 "$name: exits 0"
}
run_lua test_hostlist
run_lua test_schema
run_lua test_modules
run_lua test_alg
run_lua test_driver

# a schema error through `lamkit lua` is one line naming file:line
printf 'node "a" { cpu = 0 }\n' >"$T/bad.lua"
printf 'require("schema").load(arg[1])\n' >"$T/load.lua"
err=$("$LAMKIT" lua "$T/load.lua" "$T/bad.lua" 2>&1); rc=$?
is "$rc" 1 "a bad schema fails"
is "$err" "lamkit lua: $T/bad.lua:1: node 'a': cpu must be a positive integer, not 0" \
	"the error is one line with file:line and no schema.lua position"
done_testing
