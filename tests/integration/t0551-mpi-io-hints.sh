#!/bin/bash
# t0551: MPI-IO hints from the file ROMIO_HINTS names, as ROMIO takes them: rank 0 reads the
# file and every rank gets its hints (a rank whose ROMIO_HINTS names nothing too); the program's
# own info wins over the file; comments and blank lines are skipped; a malformed line and a
# file that cannot be read each give one warning naming the file (and line), and the open works.
# timeout: 60
. "$(dirname "$0")/../lib/common.sh"
D=$LAMKIT_TOP/out/mpi-lamkit
[ "$LAMKIT_VARIANT" = asan ] && D=$LAMKIT_TOP/out/asan/mpi-lamkit
[ -x "$D/io_hints" ] || skip_all "own MPI test programs not built"
lkmpi_before=$(ls /dev/shm | grep '^lkmpi-' | sort)

# what rank R of OUT says KEY is
hint() { printf '%s\n' "$1" | sed -n "s/^io_hints: rank $2: $3=//p"; }

cat >"$T/hints" <<'H'
# lamkit's hints for this test
cb_buffer_size 1048576

romio_cb_write	enable
cb_nodes
lamkit_test_key some_value
cb_config_list *:2
H
out=$(ROMIO_HINTS=$T/hints LKX_TIMEOUT=30 lkx -n 3 "$D/io_hints" "$T" 2>&1)
is "$(printf '%s\n' "$out" | grep -c 'io_hints: rank [0-9]: done')" 3 "io_hints ran on 3 ranks with a hints file"
is "$(hint "$out" 0 cb_buffer_size)/$(hint "$out" 2 cb_buffer_size)" 1048576/1048576 \
	"cb_buffer_size from the file, on rank 0 and rank 2"
is "$(hint "$out" 1 romio_cb_write)" enable "romio_cb_write from the file (a tab between key and value)"
is "$(hint "$out" 2 lamkit_test_key)" some_value "a key lamkit does not know is kept and reported"
is "$(printf '%s\n' "$out" | grep -c '^lamkit mpi-io: ')" 1 "one warning, from rank 0 only"
like "$out" "^lamkit mpi-io: $T/hints:5: not a key and a value \(\"cb_nodes \.\.\.\"\); line skipped" \
	"the warning names the file and the line"
is "$(hint "$out" 0 cb_config_list)/$(hint "$out" 1 cb_nodes)" "*:2/2" \
	"the lines after it are read: cb_config_list *:2 makes 2 aggregators on the one node"

out=$(ROMIO_HINTS=$T/hints LKX_TIMEOUT=30 lkx -n 2 "$D/io_hints" "$T" cb_buffer_size=2097152 romio_cb_write=disable 2>&1)
is "$(hint "$out" 0 cb_buffer_size)/$(hint "$out" 1 romio_cb_write)/$(hint "$out" 1 lamkit_test_key)" \
	2097152/disable/some_value "the program's info wins; the file's other keys stay"

# only rank 0 reads the file: rank 1's ROMIO_HINTS names nothing
out=$(LKX_TIMEOUT=30 lkx -n 2 sh -c "if [ \"\$PMI_RANK\" = 1 ]; then ROMIO_HINTS=$T/none; else ROMIO_HINTS=$T/hints; fi; export ROMIO_HINTS; exec \"$D/io_hints\" \"$T\"" 2>&1)
is "$(hint "$out" 1 cb_buffer_size)" 1048576 "rank 1 has rank 0's hints though its ROMIO_HINTS names no file"
unlike "$out" "lamkit mpi-io: ROMIO_HINTS" "no warning from rank 1"

out=$(ROMIO_HINTS=$T/none LKX_TIMEOUT=30 lkx -n 2 "$D/io_hints" "$T" 2>&1)
is "$(printf '%s\n' "$out" | grep -c 'io_hints: rank [0-9]: done')" 2 "a hints file that is not there: the open works"
like "$out" "^lamkit mpi-io: ROMIO_HINTS=$T/none: No such file or directory; no hints are taken from it\$" \
	"... with one line that says so"
is "$(hint "$out" 0 cb_buffer_size)" 8388608 "... and lamkit's default cb_buffer_size"

is "$(ls -A "$T" | grep -c 'io_hints\.')" 0 "io_hints left no file"
is "$(lkmpi_leaked "$lkmpi_before")" "" "no lkmpi shared-memory segment left"
done_testing
