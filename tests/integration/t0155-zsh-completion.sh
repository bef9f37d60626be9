#!/bin/bash
# t0155: zsh completion (packaging/completion/_lamkit.zsh, installed as in the release next to
# the bash one it loads) driven through zsh's own completion system in an interactive zsh on a
# pseudo-terminal: the very first Tab completes (a command name), options from a command's
# help, a link (lamboot) completes as its command, algorithm names.
# timeout: 120
. "$(dirname "$0")/../lib/common.sh"
command -v zsh >/dev/null || skip_all "no zsh (packaging/setup-deps installs it)"
mkdir -p "$T/bin" "$T/share/zsh/site-functions" "$T/share/bash-completion/completions"
ln -s "$LAMKIT" "$T/bin/lamkit"
ln -s "$LAMKIT" "$T/bin/lamboot"
cp "$LAMKIT_TOP/packaging/completion/_lamkit.zsh" "$T/share/zsh/site-functions/_lamkit"
cp "$LAMKIT_TOP/packaging/completion/lamkit.bash" "$T/share/bash-completion/completions/lamkit"
export PATH="$T/bin:$PATH"
comp() { # comp LINE: what Tab offers after LINE, sorted, on one line
	(cd "$T" && TMPDIR="$T" timeout 60 zsh -f "$LAMKIT_TOP/tests/lib/zsh-complete.zsh" \
		"$T/share/zsh/site-functions" "$1") | tr '\n' ' '
}
is "$(comp 'lamkit sh')" "shrink " "the first Tab completes a command name"
is "$(comp 'lamkit wipe --p')" "--purge " "an option from the command's help"
is "$(comp 'lamboot --no')" "--no-ship " "a link completes as its command"
is "$(comp 'lamkit boot --algorithm t')" "thread tree " "algorithm names"
done_testing
