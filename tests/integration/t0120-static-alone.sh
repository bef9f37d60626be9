#!/bin/bash
# t0120: the release binary runs copied alone into an empty directory under env -i: no files
# next to it, no environment, no dynamic loader.
# timeout: 60
. "$(dirname "$0")/../lib/common.sh"
[ "$LAMKIT_VARIANT" = musl ] || skip_all "only the static musl binary is meant to run alone"

mkdir "$T/empty"
cp "$LAMKIT" "$T/empty/lamkit"
file "$T/empty/lamkit" | grep -q 'statically linked'; ok $? "file says statically linked"
ldd "$T/empty/lamkit" 2>&1 | grep -q 'not a dynamic executable'; ok $? "ldd says not a dynamic executable"
out=$(cd "$T/empty" && env -i ./lamkit version); ok $? "version runs under env -i"
like "$out" "static, musl" "and says static"
printf 'print(lamkit.hostname() ~= nil, require("lamkit.util").split("a b", " ")[2])\n' >"$T/s.lua"
out=$(cd "$T/empty" && env -i ./lamkit lua "$T/s.lua"); ok $? "embedded Lua runs under env -i"
is "$out" "true	b" "embedded scripts load with no files around"
ln -s lamkit "$T/empty/lamboot"
out=$(cd "$T/empty" && env -i ./lamboot --help); ok $? "a symlink works under env -i"
is "$(ls "$T/empty" | wc -l)" 2 "nothing was written next to the binary"
done_testing
