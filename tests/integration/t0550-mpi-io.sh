#!/bin/bash
# t0550: MPI-IO in lamkit's own MPI: the lk_io checks (files, views, independent and two-phase
# collective access, nonblocking, split, shared and ordered, atomic, external32, errors) on one
# node and over two agents (one aggregator each, the shared pointer next to the file), and bad
# input through MPI_ERRORS_RETURN: a file one rank cannot open, a view with a negative extent on
# one rank, reads past the end, a full file system (a 1 MiB tmpfs), a negative count on one
# rank of a collective: every rank gets the error class, nobody hangs.
# timeout: 150
. "$(dirname "$0")/../lib/common.sh"
D=$LAMKIT_TOP/out/mpi-lamkit
[ "$LAMKIT_VARIANT" = asan ] && D=$LAMKIT_TOP/out/asan/mpi-lamkit
[ -x "$D/lk_io" ] || skip_all "own MPI test programs not built"
lkmpi_before=$(ls /dev/shm | grep '^lkmpi-' | sort)
export LK_IO_DIR=$T

for n in 1 2 4; do
	out=$(LKX_TIMEOUT=60 lkx -n $n "$D/lk_io" 2>&1)
	like "$out" "lk_io: OK size=$n" "lk_io -n $n"
done
out=$(LKX_TIMEOUT=60 lkx --local-agents 2:2 -n 4 "$D/lk_io" 2>&1)
like "$out" "lk_io: OK size=4" "lk_io -n 4 over two agents (two aggregators)"
is "$(ls -A "$T" | grep -c 'lk_io\.')" 0 "lk_io left no file (DELETE_ON_CLOSE, shared pointers)"

# every rank's line for STEP says CLASS
all_say() { # OUT N STEP CLASS
	[ "$(printf '%s\n' "$1" | grep -cE "^io_bad: rank [0-9]+: $3: $4\$")" = "$2" ]
}
verdict() { # RC DESCRIPTION OUT
	ok "$1" "$2"
	[ "$1" -eq 0 ] || diag "$3"
}
out=$(LKX_TIMEOUT=30 lkx -n 3 "$D/io_bad" view "$T" 2>&1)
all_say "$out" 3 set_view MPI_ERR_IO
verdict $? "a negative-extent filetype on the last rank: MPI_ERR_IO on all 3 ranks" "$out"
out=$(LKX_TIMEOUT=30 lkx -n 3 "$D/io_bad" coll "$T" 2>&1)
all_say "$out" 3 write_at_all MPI_ERR_COUNT && all_say "$out" 3 "write_at_all again" MPI_SUCCESS
verdict $? "a negative count on rank 1 of a collective write: MPI_ERR_COUNT on all, the next works" "$out"
out=$(LKX_TIMEOUT=30 lkx -n 2 "$D/io_bad" eof "$T" 2>&1)
all_say "$out" 2 "read 100 of 10 count 10" MPI_SUCCESS &&
	all_say "$out" 2 "read past the end count 0" MPI_SUCCESS &&
	printf '%s\n' "$out" | grep -q 'rank 0: read_at_all count 8: MPI_SUCCESS' &&
	printf '%s\n' "$out" | grep -q 'rank 1: read_at_all count 6: MPI_SUCCESS'
verdict $? "reads past the end: short counts, no error" "$out"

# a file rank 1 cannot open: mode 000, and rank 1 without the capability that lets root in
touch "$T/locked" && chmod 000 "$T/locked"
if [ "$(id -u)" = 0 ]; then
	drop="setpriv --bounding-set -dac_override,-dac_read_search"
	command -v setpriv >/dev/null || skip_all "no setpriv"
else
	drop=""
fi
out=$(LKX_TIMEOUT=30 lkx -n 3 sh -c "if [ \"\$PMI_RANK\" = 1 ]; then exec $drop \"$D/io_bad\" open \"$T/locked\"; else exec \"$D/io_bad\" open \"$T/locked\"; fi" 2>&1)
all_say "$out" 3 open MPI_ERR_ACCESS
verdict $? "a file rank 1 may not open (mode 000${drop:+, root without CAP_DAC_OVERRIDE}): MPI_ERR_ACCESS on all 3 ranks" "$out"

# a full file system: a 1 MiB tmpfs in a mount namespace of the job's own
if [ "$(id -u)" = 0 ] && command -v unshare >/dev/null; then
	mkdir -p "$T/full"
	out=$(timeout -k 5 60 unshare -m sh -c "mount --make-rprivate / && mount -t tmpfs -o size=1m tmpfs '$T/full' && cd '$T' && '$LAMKIT' mpiexec -n 3 '$D/io_bad' full '$T/full'" 2>&1)
	all_say "$out" 3 "write_at_all until full \(call [0-9]+\)" MPI_ERR_NO_SPACE &&
		all_say "$out" 3 "write_at when full" MPI_ERR_NO_SPACE && all_say "$out" 3 close MPI_SUCCESS
	verdict $? "a full file system: MPI_ERR_NO_SPACE on every rank of the collective write, then on each write" "$out"
fi
is "$(lkmpi_leaked "$lkmpi_before")" "" "no lkmpi shared-memory segment left"
done_testing
