#!/bin/bash
# t0110: embedded Lua: scripts run, lua-dump writes them, LAMKIT_LUA_PATH overrides file by
# file, script errors are one "file:line: message" line, never a crash.
# timeout: 60
. "$(dirname "$0")/../lib/common.sh"

cat >"$T/ok.lua" <<'LUA'
local u = require("lamkit.util")
local parts = u.split(arg[1], ",")
print(#parts, lamkit.version, lamkit.cpus() >= 1, type(lamkit.time()))
return tonumber(arg[2]) or 0
LUA
out=$("$LAMKIT" lua "$T/ok.lua" a,b,c 0); ok $? "a script runs"
like "$out" "^3	[0-9.]+	true	number$" "embedded module and lamkit primitives work"
"$LAMKIT" lua "$T/ok.lua" x 7 >/dev/null; is $? 7 "an integer returned by the script is the exit status"

out=$("$LAMKIT" lua-dump "$T/d"); ok $? "lua-dump exits 0"
ok "$([ -f "$T/d/lua/lamkit/util.lua" ]; echo $?)" "lua-dump wrote lamkit/util.lua"
grep -q '^function M.agent(node, u)' "$T/d/lua/rte.lua"; ok $? "lua-dump wrote the RTE config rte.lua"
cmp -s "$T/d/lua/lamkit/util.lua" "$LAMKIT_TOP/lua/lamkit/util.lua"; ok $? "dumped script is the shipped one"
echo "-- edited" >>"$T/d/lua/lamkit/util.lua"
"$LAMKIT" lua-dump "$T/d" >/dev/null
grep -q -- '-- edited' "$T/d/lua/lamkit/util.lua"; ok $? "lua-dump keeps existing files without -f"
"$LAMKIT" lua-dump -f "$T/d" >/dev/null
grep -q -- '-- edited' "$T/d/lua/lamkit/util.lua"; ok $((!$?)) "lua-dump -f overwrites"

cat >"$T/d/lua/lamkit/util.lua" <<'LUA'
return { split = function() return { "overridden" } end }
LUA
out=$(LAMKIT_LUA_PATH="$T/nonexistent:$T/d/lua" "$LAMKIT" lua "$T/ok.lua" a,b,c)
like "$out" "^1	" "LAMKIT_LUA_PATH overrides an embedded module"

printf 'local x = 1\nlocal y = nil\nreturn y.field\n' >"$T/bad.lua"
err=$("$LAMKIT" lua "$T/bad.lua" 2>&1); rc=$?
is "$rc" 1 "a runtime error exits 1, not a crash"
like "$err" "bad\.lua:3: attempt to index a nil value" "runtime error names file:line"
is "$(printf '%s\n' "$err" | wc -l)" 1 "runtime error is one line"

printf 'local x = = 2\n' >"$T/syntax.lua"
err=$("$LAMKIT" lua "$T/syntax.lua" 2>&1); rc=$?
is "$rc" 1 "a syntax error exits 1"
like "$err" "syntax\.lua:1: unexpected symbol" "syntax error names file:line"

mkdir -p "$T/o/lamkit"
printf 'local M = {}\nfunction M.split() error("broken override") end\nreturn M\n' >"$T/o/lamkit/util.lua"
err=$(LAMKIT_LUA_PATH="$T/o" "$LAMKIT" lua "$T/ok.lua" a 2>&1); rc=$?
is "$rc" 1 "an error inside an override module exits 1"
like "$err" "o/lamkit/util\.lua:2: broken override" "and names the override file and line"

printf 'return require("no.such.module")\n' >"$T/req.lua"
err=$("$LAMKIT" lua "$T/req.lua" 2>&1)
like "$err" "module 'no.such.module' not found" "missing module is reported"

printf '\x1bLua' >"$T/bin.lua"
err=$("$LAMKIT" lua "$T/bin.lua" 2>&1); rc=$?
is "$rc" 1 "binary chunks are refused"
like "$err" "binary" "the refusal says binary"

err=$("$LAMKIT" lua "$T/missing.lua" 2>&1); rc=$?
is "$rc" 1 "missing script exits 1"
like "$err" "missing\.lua" "missing script is named"
done_testing
