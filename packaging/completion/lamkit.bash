# packaging/completion/lamkit.bash: bash completion for lamkit and its LAM/MPI-named links.
# Commands and options come from lamkit's own help (so they never drift), node names from the
# booted universe (`lamkit nodes`), job ids from `lamkit ps`. Installed as
# share/bash-completion/completions/lamkit; zsh loads it through bashcompinit (_lamkit.zsh).

_lamkit_bin() { # the lamkit to ask: the one being completed when it is a path, else PATH's
	local b=${COMP_WORDS[0]}
	case $b in */*) b=${b%/*}/lamkit ;; *) b=lamkit ;; esac
	printf '%s' "$b"
}

_lamkit_link() { # a link name (lamboot, tping...) -> its command, "" for lamkit itself
	case ${1##*/} in
	lamboot) echo boot ;; lamgrow) echo grow ;; recon) echo recon ;; wipe) echo wipe ;;
	lamhalt) echo halt ;; lamnodes) echo nodes ;; lamshrink) echo shrink ;;
	lamclean) echo clean ;; mpitask) echo ps ;; tping) echo ping ;; lamexec) echo exec ;;
	mpiexec | mpirun) echo mpiexec ;; mpicc) echo mpicc ;; atollrun) echo atollrun ;;
	mpifort | mpif90 | mpif77) echo mpifort ;;
	esac
}

_lamkit() {
	local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD - 1]}
	local bin cmd first=1
	bin=$(_lamkit_bin)
	cmd=$(_lamkit_link "${COMP_WORDS[0]}")
	COMPREPLY=()
	if [ -z "$cmd" ]; then
		if [ "$COMP_CWORD" -eq 1 ]; then
			COMPREPLY=($(compgen -W "$("$bin" help 2>/dev/null |
				awk '/^  [a-z]/ { print $1 }')" -- "$cur"))
			return 0
		fi
		cmd=${COMP_WORDS[1]} first=2
	fi
	local nodes jobs
	case $cmd:$prev in
	boot:--boot | recon:--boot | grow:--boot)
		COMPREPLY=($(compgen -W "local ssh rsh slurm" -- "$cur")); return 0 ;;
	boot:--algorithm)
		COMPREPLY=($(compgen -W "linear windowed tree thread oneshot" -- "$cur")); return 0 ;;
	mpiexec:-hosts | mpiexec:--host | exec:-hosts | exec:--host)
		nodes=$("$bin" nodes 2>/dev/null | awk 'NR > 1 { print $2 }')
		COMPREPLY=($(compgen -W "$nodes" -- "${cur##*,}"))
		return 0 ;;
	esac
	if [[ $cur == -* ]]; then
		COMPREPLY=($(compgen -W "$("$bin" help "$cmd" 2>/dev/null |
			grep -o -- '\(^\|[][ |(]\)--*[a-zA-Z][-a-zA-Z0-9_]*=\?' |
			sed 's/^[][ |(]*//' | sort -u)" -- "$cur"))
		return 0
	fi
	local nargs=$((COMP_CWORD - first)) # arguments before the one being completed
	case $cmd in
	shrink | ping)
		nodes=$("$bin" nodes 2>/dev/null | awk 'NR > 1 { print $2 }')
		COMPREPLY=($(compgen -W "$nodes" -- "$cur")) ;;
	kill)
		if [ "$nargs" -eq 0 ]; then # the job id, then the signal
			jobs=$("$bin" ps 2>/dev/null | awk 'NR > 1 { print $1 }' | sort -u)
			COMPREPLY=($(compgen -W "$jobs" -- "$cur"))
		else
			COMPREPLY=($(compgen -W "TERM KILL INT HUP QUIT USR1 USR2 STOP CONT" -- "$cur"))
		fi ;;
	help)
		COMPREPLY=($(compgen -W "$("$bin" help 2>/dev/null |
			awk '/^  [a-z]/ { print $1 }')" -- "$cur")) ;;
	boot | recon | wipe | lua | lua-dump | mpicc | mpicxx | mpifort | exec | mpiexec)
		COMPREPLY=($(compgen -f -- "$cur")) ;;
	esac
	return 0
}

complete -F _lamkit lamkit lamboot lamgrow recon wipe lamhalt lamnodes lamshrink lamclean \
	mpitask tping lamexec mpiexec mpirun
