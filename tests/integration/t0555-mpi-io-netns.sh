#!/bin/bash
# t0555: MPI-IO across 2 namespace nodes booted over ssh, on a directory both see through a bind
# mount (made inside each node's mount namespace): a collective block-cyclic 2D write
# (io_cyclic, one aggregator per node) gives the same bytes from lamkit's MPI as from MPICH's
# (ROMIO), and lk_io passes with its file, and its shared file pointer, on that directory.
# timeout: 120
. "$(dirname "$0")/../lib/common.sh"
[ "$(id -u)" = 0 ] || skip_all "needs root (network namespaces)"
command -v sshd >/dev/null || [ -x /usr/sbin/sshd ] || skip_all "no sshd"
D=$LAMKIT_TOP/out/mpi-lamkit
[ "$LAMKIT_VARIANT" = asan ] && D=$LAMKIT_TOP/out/asan/mpi-lamkit
[ -x "$D/io_cyclic" ] || skip_all "own MPI test programs not built"
lkmpi_before=$(ls /dev/shm | grep '^lkmpi-' | sort)
. "$LAMKIT_TOP/tests/lib/netns.sh"
at_exit netns_down
netns_up 2 || { ok 1 "netns_up 2"; done_testing; }
U="$LAMKIT_TMPDIR/lamkit-$(id -u)/universe"
at_exit '[ -f "$U" ] && timeout 30 "$LAMKIT" wipe >/dev/null 2>&1'
lk() { (cd "$T" && timeout -k 5 60 "$LAMKIT" "$@"); }

# the shared directory: $T/share, mounted on $T/mnt in each node only
mkdir -p "$T/share" "$T/mnt"
for n in n1 n2; do netns_exec "$n" mount --bind "$T/share" "$T/mnt" || ok 1 "bind mount on $n"; done
{
	echo 'boot = "ssh"; algorithm = "windowed"; timeout = 15'
	echo "ssh = { options = { \"-F\", \"$NETNS_SSH_CONFIG\" }, verify = false }"
	echo "defaults = { program = \"$LAMKIT\" }"
	echo 'for i = 1, 2 do node("n" .. i) { cpu = 2 } end'
} >"$T/u.lua"
lk boot u.lua >/dev/null 2>&1
is $? 0 "universe of 2 nodes booted over ssh"
agents=$([ -f "$U" ] && awk '$1 == "node" { print $8 }' "$U" | tr '\n' ' ')

out=$(LKX_TIMEOUT=60 lkx -n 4 "$D/io_cyclic" "$T/mnt/lamkit.dat" 512 16 2>&1)
like "$out" "io_cyclic: OK bytes=2097152 ranks=4" "lamkit's MPI: block-cyclic write from 2 nodes, read back"
M=$LAMKIT_TOP/out/mpi/mpich/io_cyclic
if [ -x "$M" ]; then
	out=$(LKX_TIMEOUT=60 lkx -n 4 "$M" "$T/mnt/mpich.dat" 512 16 2>&1)
	like "$out" "io_cyclic: OK bytes=2097152 ranks=4" "MPICH (ROMIO): the same write from 2 nodes"
	cmp -s "$T/share/lamkit.dat" "$T/share/mpich.dat"
	ok $? "lamkit's file and MPICH's are byte for byte the same"
fi
is "$(ls -A "$T/mnt")" "" "the files went through the nodes' bind mounts (nothing on the host's $T/mnt)"
out=$(LK_IO_DIR=$T/mnt LKX_TIMEOUT=60 lkx -n 4 "$D/lk_io" 2>&1)
like "$out" "lk_io: OK size=4" "lk_io across the 2 nodes on the shared directory"
is "$(ls -A "$T/share" | grep -v '\.dat$')" "" "no file left on the shared directory (shared pointers removed)"

lk halt >/dev/null 2>&1
is $? 0 "halt"
# shellcheck disable=SC2086 # a list of pids
wait_gone 10 $agents
ok $? "every agent gone"
is "$(lkmpi_leaked "$lkmpi_before")" "" "no lkmpi shared-memory segment left"
done_testing
