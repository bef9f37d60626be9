#!/bin/bash
# t0100: the multi-call dispatch: command table, symlink names, --help, typos, usage errors.
# timeout: 60
. "$(dirname "$0")/../lib/common.sh"

out=$("$LAMKIT" help); ok $? "lamkit help exits 0"
for c in boot grow recon wipe halt nodes shrink clean ps top ping exec kill mpiexec mpicc version \
	help lua lua-dump; do
	like "$out" "^  $c " "help lists $c"
done
unlike "$out" "^  agent " "help hides the internal agent command"

"$LAMKIT" >/dev/null 2>&1; is $? 100 "no command: usage exit 100"

for pair in lamboot:boot lamgrow:grow recon:recon wipe:wipe lamhalt:halt lamnodes:nodes \
	lamshrink:shrink lamclean:clean mpitask:ps tping:ping lamexec:exec \
	mpiexec:mpiexec mpirun:mpiexec mpicc:mpicc; do
	link=${pair%%:*} cmd=${pair#*:}
	ln -s "$LAMKIT" "$T/$link"
	h=$("$T/$link" --help 2>&1); rc=$?
	is "$rc" 0 "$link --help exits 0"
	like "$h" "lamkit $cmd" "$link runs the $cmd command"
	h2=$("$LAMKIT" "$cmd" --help 2>&1)
	is "$h2" "$h" "lamkit $cmd --help matches $link --help"
done

out=$("$LAMKIT" help schema); rc=$?
is "$rc" 0 "help schema"
like "$out" "^## 3\. Boot schemas" "help schema prints the schema section of the docs"
like "$("$LAMKIT" help ship)" "exits \*\*97\*\*" "help ship: finding and shipping the agent"
like "$("$LAMKIT" help rte)" "--rte-prolog" "help rte: the RTE configuration"
like "$("$LAMKIT" help version)" "--build" "help version"
like "$("$LAMKIT" help help)" "TOPIC" "help help"
err=$("$LAMKIT" help nosuch 2>&1); is $? 100 "help of an unknown topic: usage exit"

err=$("$LAMKIT" mpiexce -n 2 true 2>&1); rc=$?
is "$rc" 100 "typo exits 100"
like "$err" "did you mean 'mpiexec'" "typo suggests mpiexec"
is "$(printf '%s\n' "$err" | wc -l)" 1 "typo error is one line"
err=$("$LAMKIT" lamnodes 2>&1); like "$err" "unknown command 'lamnodes'" "symlink names are not subcommands"
err=$("$LAMKIT" frobnicate 2>&1); rc=$?
is "$rc" 100 "unknown command exits 100"
unlike "$err" "did you mean" "no silly suggestion for a far-off name"

err=$("$LAMKIT" version extra 2>&1); rc=$?
is "$rc" 100 "version with an argument is a usage error"
like "$err" "^lamkit version: takes no arguments" "usage error names the command"

v=$("$LAMKIT" version); ok $? "version exits 0"
like "$v" "^lamkit [0-9]+\.[0-9]+\.[0-9]+ \(git [0-9a-f]+" "version shows lamkit version and git revision"
like "$v" "Lua 5\.4\.[0-9]" "version shows the Lua release"
like "$v" "libsodium 1\.0\.18" "version shows libsodium"
if [ "$LAMKIT_VARIANT" = musl ]; then
	like "$v" "^static, musl" "the release binary says static"
else
	like "$v" "^dynamic, glibc" "the sanitizer binary says dynamic"
fi
done_testing
