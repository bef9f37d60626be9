#!/bin/bash
# t0150: bash completion (packaging/completion/lamkit.bash) driven as bash would drive it:
# commands, options read from each command's help, links (lamboot, tping), values of --boot and
# --algorithm, node names of the booted universe, job ids of its running jobs, signal names.
# timeout: 60
. "$(dirname "$0")/../lib/common.sh"
mkdir -p "$T/bin"
ln -s "$LAMKIT" "$T/bin/lamkit"
export PATH="$T/bin:$PATH"
U="$LAMKIT_TMPDIR/lamkit-$(id -u)/universe"
at_exit '[ -f "$U" ] && timeout 30 "$LAMKIT" wipe >/dev/null 2>&1'
# comp WORD...: what completing the last word offers, sorted, one line
comp() {
	bash -c '. "$0"; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _lamkit
		[ ${#COMPREPLY[@]} = 0 ] || printf "%s\n" "${COMPREPLY[@]}" | sort | tr "\n" " "' \
		"$LAMKIT_TOP/packaging/completion/lamkit.bash" "$@"
}
is "$(comp lamkit sh)" "shrink " "a command name"
like "$(comp lamkit '')" "^atollrun boot clean exec grow halt help kill lua lua-dump mpicc mpicxx mpiexec mpifort nodes ping ps recon shrink top version wipe $" \
	"every command, not the internal agent"
is "$(comp lamkit wipe --p)" "--purge " "an option from the command's help"
is "$(comp lamkit boot --sh)" "--ship --ship= " "options of boot"
is "$(comp lamboot --no)" "--no-ship " "a link completes as its command"
is "$(comp lamkit boot --algorithm t)" "thread tree " "algorithm names"
is "$(comp lamkit boot --boot s)" "slurm ssh " "boot module names"
is "$(comp lamkit kill 123 T)" "TERM " "signal names after the job id"
is "$(comp lamkit shrink '')" "" "no universe: no node names"

printf 'boot = "local"\nfor i = 1, 3 do node("f" .. i) { cpu = 1 } end\n' >"$T/u.lua"
(cd "$T" && timeout 30 "$LAMKIT" boot u.lua >/dev/null 2>&1); is $? 0 "boot 3 local nodes"
(cd "$T" && exec timeout -k 5 30 "$LAMKIT" mpiexec -n 2 sleep 29 >/dev/null 2>&1) &
job=$!
for _ in $(seq 100); do [ "$("$LAMKIT" ps 2>/dev/null | grep -c 'sleep 29')" = 2 ] && break; sleep 0.1; done
id=$("$LAMKIT" ps | awk 'NR == 2 { print $1 }')
is "$(comp lamkit shrink f)" "f1 f2 f3 " "node names of the universe"
is "$(comp tping f2)" "f2 " "through the tping link"
is "$(comp lamkit mpiexec -hosts f1,f)" "f1 f2 f3 " "after a comma in -hosts"
is "$(comp lamkit kill '')" "$id " "the running job's id"
kill $job 2>/dev/null
wait $job 2>/dev/null
(cd "$T" && timeout 30 "$LAMKIT" halt >/dev/null 2>&1); is $? 0 "halt"
done_testing
