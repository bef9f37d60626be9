#compdef lamkit lamboot lamgrow recon wipe lamhalt lamnodes lamshrink lamclean mpitask tping lamexec
# packaging/completion/_lamkit.zsh: zsh completion for lamkit: the bash completion (commands,
# options, node names, job ids) through zsh's bashcompinit. Installed as
# share/zsh/site-functions/_lamkit next to share/bash-completion/completions/lamkit.
autoload -U +X bashcompinit && bashcompinit
source "${${(%):-%x}:A:h}/../../bash-completion/completions/lamkit"
_bash_complete -F _lamkit # this first time; `complete` in it registered the rest
