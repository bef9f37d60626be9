#!/usr/bin/env bash
# tests/mpi/build.sh: build every tests/mpi/*.c with each installed MPI flavour into OUTDIR/<flavour>/.
#
# usage: tests/mpi/build.sh OUTDIR
#   flavours: mpich (mpicc.mpich), openmpi (mpicc.openmpi), and lamkit when LAMKIT_MPICC is set
#   (a command line such as "out/lamkit mpicc"). A flavour whose compiler is missing is skipped
#   with a message. Outputs newer than their source (and than this script) are not rebuilt.
#   Flags: -O2 -Wall -Wextra -Werror plus $MPI_CFLAGS; any warning or error fails the build.
# exit: 0 all built or up to date, 1 a compile failed, 100 usage error.
set -u

if [ $# -ne 1 ] || [ -z "$1" ]; then
    echo "usage: $0 OUTDIR" >&2
    exit 100
fi
out=$1
src_dir=$(cd "$(dirname "$0")" && pwd)
self="$src_dir/build.sh"
flags="-O2 -Wall -Wextra -Werror ${MPI_CFLAGS:-}"

flavours=("mpich:mpicc.mpich" "openmpi:mpicc.openmpi")
if [ -n "${LAMKIT_MPICC:-}" ]; then
    flavours+=("lamkit:$LAMKIT_MPICC")
fi

failed=0 built=0 fresh=0
for fl in "${flavours[@]}"; do
    name=${fl%%:*}
    cc=${fl#*:}
    read -r -a cc_words <<<"$cc"
    if ! command -v "${cc_words[0]}" >/dev/null 2>&1; then
        echo "build.sh: $name: compiler '${cc_words[0]}' not found, skipping this flavour" >&2
        continue
    fi
    mkdir -p "$out/$name" || exit 1
    for src in "$src_dir"/*.c; do
        prog=$(basename "$src" .c)
        dst="$out/$name/$prog"
        if [ -x "$dst" ] && [ "$dst" -nt "$src" ] && [ "$dst" -nt "$self" ]; then
            fresh=$((fresh + 1))
            continue
        fi
        log="$dst.log"
        # shellcheck disable=SC2086 # flags are meant to be split
        if timeout 120 "${cc_words[@]}" $flags -o "$dst.tmp" "$src" >"$log" 2>&1 && [ ! -s "$log" ]; then
            mv -f "$dst.tmp" "$dst"
            rm -f "$log"
            built=$((built + 1))
        else
            echo "build.sh: FAILED: $name/$prog ($cc $flags $src):" >&2
            sed 's/^/    /' "$log" >&2
            rm -f "$dst.tmp"
            failed=$((failed + 1))
        fi
    done
done
echo "build.sh: built $built, up to date $fresh, failed $failed (in $out)"
[ "$failed" -eq 0 ] || exit 1
exit 0
