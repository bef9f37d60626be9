# tests/lib/zsh-complete.zsh FPATHDIR LINE: what zsh's completion system (compinit, the _lamkit
# file in FPATHDIR) offers when LINE is typed into an interactive zsh followed by Tab; sorted,
# one a line. compadd is wrapped to print what it adds; the shell runs on a pseudo-terminal.
zmodload zsh/zpty
export LKZ_FPATH=$1 ZDOTDIR=${TMPDIR:-/tmp}/lkz.$$
mkdir -p "$ZDOTDIR"
echo 'unsetopt GLOBAL_RCS' >"$ZDOTDIR/.zshenv" # only our .zshrc, not the machine's
cat >"$ZDOTDIR/.zshrc" <<'RC'
PS1='%% ' RPS1=
fpath=($LKZ_FPATH $fpath)
autoload -U compinit && compinit -u -D
compadd() {
	if [[ ${@[1,(i)(-|--)]} == *-(O|A|D)\ * ]]; then builtin compadd "$@"; return; fi
	local -a h
	builtin compadd -A h "$@"
	(( $#h )) && print -rn -- " ${(j: :)${(@)h/#/<<}} <<END "
	builtin compadd "$@"
}
print RE""ADY
RC
zpty z zsh -i
out=
typeset -F SECONDS=0
while (( SECONDS < 20 )) && [[ $out != *READY* ]]; do
	zpty -r -t z chunk && out+=$chunk || sleep 0.05
done
zpty -w -n z "$2"$'\t'
out=
while (( SECONDS < 30 )) && [[ $out != *'<<END'* && $out != *$'\a'* ]]; do
	zpty -r -t z chunk && out+=$chunk || sleep 0.05
done
zpty -d z
rm -rf "$ZDOTDIR"
print -r -- "$out" | tr ' \r' '\n\n' | sed -n 's/^<<//p' | grep -vx END | sort -u
