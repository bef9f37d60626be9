#!/bin/bash
# t0300: mpiexec's Hydra-compatible options, MPMD, environment and working directory, usage
# errors, programs that cannot start.
# timeout: 120
. "$(dirname "$0")/../lib/common.sh"

out=$(lkx -n 3 sh -c 'echo "r=$PMI_RANK s=$PMI_SIZE n=$MPI_LOCALNRANKS id=$MPI_LOCALRANKID fd=$PMI_FD"' | sort)
is "$out" "r=0 s=3 n=3 id=0 fd=3
r=1 s=3 n=3 id=1 fd=3
r=2 s=3 n=3 id=2 fd=3" "-n 3: PMI_RANK/PMI_SIZE/MPI_LOCAL* per rank"
out=$(lkx -np 2 sh -c 'test -S /proc/self/fd/3 || readlink /proc/self/fd/3 | grep -q socket && echo sock')
is "$out" "sock
sock" "-np 2: PMI_FD is an inherited socket"
cpus=$(nproc)
is "$(lkx true; echo $?)" 0 "no -n: runs"
is "$(lkx sh -c 'echo x' | wc -l)" "$cpus" "no -n: one rank per slot ($cpus)"

out=$(lkx -n 1 -env A 1 sh -c 'echo $A$PMI_RANK' : -n 2 -env A 2 sh -c 'echo $A$PMI_RANK' | sort)
is "$out" "10
21
22" "MPMD: two programs, ranks numbered across them, -env per program"

export LKT_SECRET=s3 LKT_OTHER=o4
is "$(lkx -n 1 sh -c 'echo $LKT_SECRET')" "s3" "our environment is passed by default"
is "$(lkx -n 1 -genvnone /usr/bin/env | grep -c LKT_)" 0 "-genvnone passes none of it"
is "$(lkx -n 1 -genvnone -genv X 5 /usr/bin/env | grep '^X=')" "X=5" "-genvnone still passes -genv"
is "$(lkx -n 1 -genvlist LKT_OTHER,PATH sh -c 'echo ${LKT_SECRET:-none} $LKT_OTHER')" "none o4" "-genvlist passes only the listed"
is "$(lkx -n 2 -genv G 7 sh -c 'echo $G' | sort -u)" "7" "-genv reaches every rank"
is "$(lkx -n 1 -env PMI_RANK 99 sh -c 'echo $PMI_RANK')" "0" "PMI variables cannot be overridden by accident"

mkdir -p "$T/w1" "$T/w2"
is "$(lkx -n 1 -wdir "$T/w1" pwd)" "$T/w1" "-wdir sets the working directory"
is "$(lkx -n 1 -wdir "$T/w1" pwd : -n 1 -wdir "$T/w2" pwd | sort)" "$T/w1
$T/w2" "-wdir per MPMD program"
is "$(cd "$T/w2" && timeout 30 "$LAMKIT" mpiexec -n 1 pwd)" "$T/w2" "default working directory is ours"
printf '#!/bin/sh\necho local-script\n' >"$T/w1/prog" && chmod +x "$T/w1/prog"
is "$(lkx -n 1 -wdir "$T/w1" ./prog)" "local-script" "a relative program is found in -wdir"
is "$(lkx -n 2 echo 'a b' c)" "a b c
a b c" "arguments with spaces survive"

out=$(lkx -n 2 -l sh -c 'echo one; echo two >&2' 2>&1 | sort)
is "$out" "[0] one
[0] two
[1] one
[1] two" "-l tags stdout and stderr lines with the rank"
is "$(lkx -n 1 --tag-output echo x)" "[0] x" "--tag-output is -l"

err=$(lkx -n 2 --frobnicate true 2>&1); rc=$?
is "$rc" 100 "unknown option exits 100"
like "$err" "unknown option '--frobnicate'" "and names it"
is "$(printf '%s\n' "$err" | wc -l)" 1 "in one line"
err=$(lkx -n 2>&1); is "$?" 100 "-n without value is a usage error"
like "$err" "needs a value" "which says so"
err=$(lkx -n zero true 2>&1); is "$?" 100 "-n zero is a usage error"
err=$(lkx -n 2 2>&1); like "$err" "no program to run" "no program: usage error"
err=$(lkx -n 1 true : 2>&1); is "$?" 100 "a trailing ':' is a usage error"
out=$(lkx --help); ok $? "--help exits 0"
like "$out" "-genvlist" "--help lists the options"

err=$(lkx -n 2 ./no-such-program 2>&1); rc=$?
is "$rc" 127 "a missing program exits 127"
like "$err" "cannot start rank 0 on .*: \./no-such-program \(relative to /[^)]*\): No such file or directory" "and says which, where it was looked for and why"
touch "$T/noexec"
err=$(lkx -n 1 ./noexec 2>&1); rc=$?
is "$rc" 126 "a non-executable program exits 126"
like "$err" "Permission denied" "and says permission denied"
all=$(awk '/^Cpus_allowed_list/ {print $2}' /proc/self/status)
is "$(lkx -n 2 sh -c 'awk "/^Cpus_allowed_list/ {print \$2}" /proc/self/status' | sort -u)" "$all" "no binding by default (as Hydra)"
out=$(lkx -n 2 --bind-to core sh -c 'echo $PMI_RANK $(awk "/^Cpus_allowed_list/ {print \$2}" /proc/self/status)' | sort)
first=$(taskset -c -p $$ | sed 's/.*: //' | cut -d, -f1 | cut -d- -f1)
like "$out" "^0 $first$" "--bind-to core: rank 0 on the first usable CPU"
is "$(printf '%s\n' "$out" | awk '{print $2}' | sort -u | wc -l)" "$([ "$(nproc)" -ge 2 ] && echo 2 || echo 1)" "--bind-to core: ranks on different CPUs"
err=$(lkx --bind-to mainboard -n 1 true 2>&1); is "$?" 100 "--bind-to with an unknown kind is a usage error"
out=$(ulimit -Sn 256 && lkx -n 120 sh -c 'ulimit -n' | sort | uniq -c | awk '{print $1, $2}')
is "$out" "120 256" "120 ranks (360 agent fds) start under a soft fd limit of 256, and keep that limit"
is "$(ls "$LAMKIT_TMPDIR/lamkit-$(id -u)")" "" "no session directory left"
done_testing
