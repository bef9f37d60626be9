#!/bin/bash
# t0510: lamkit mpicc: -show, glibc (system cc) and static musl programs against lamkit's own
# libmpi, which run under lamkit mpiexec and MPICH's Hydra.
# timeout: 120
. "$(dirname "$0")/../lib/common.sh"
MPICC=$LAMKIT_TOP/out/lamkit # the build tree's include/ and lib/ sit next to out/lamkit
src=$LAMKIT_TOP/tests/mpi

show=$("$MPICC" mpicc -show -O2 -o x x.c)
like "$show" "^cc -I.*/out/include -O2 -o x x.c -L.*/out/lib -lmpi -ltransport -lpmi -lm$" "-show prints the compile and link command"
like "$("$MPICC" mpicc -show -c x.c)" "^cc -I[^ ]*include -c x.c$" "compile-only gets no libraries"
like "$("$MPICC" mpicc -show -musl x.c)" "^musl-gcc .* -L.*/out/lib/musl .* -static$" "-musl uses musl-gcc and links statically"
ln -s "$MPICC" "$T/mpicc"
like "$("$T/mpicc" -show x.c)" "^cc " "the mpicc symlink works (via a symlink's directory: found by /proc/self/exe)"

"$MPICC" mpicc -O2 -o "$T/ring_g" "$src/ring.c"; ok $? "ring.c compiles with the system cc"
"$MPICC" mpicc -musl -O2 -o "$T/ring_m" "$src/ring.c"; ok $? "ring.c compiles with -musl"
file "$T/ring_m" | grep -q 'statically linked'; ok $? "the -musl program is static"
like "$(lkx -n 3 "$T/ring_g" 2)" "ring: OK laps=2 size=3" "the glibc program runs under lamkit mpiexec"
like "$(lkx -n 3 "$T/ring_m" 2)" "ring: OK laps=2 size=3" "the static program runs under lamkit mpiexec"
if command -v mpiexec.hydra >/dev/null; then
	like "$(cd "$T" && timeout 60 mpiexec.hydra -n 2 "$T/ring_g" 2)" "ring: OK laps=2 size=2" "and under MPICH's mpiexec.hydra (through our libpmi)"
fi
err=$("$MPICC" mpicc -o "$T/bad" "$T/nonexistent.c" 2>&1); ok $((! $?)) "a compiler error is passed through as a failure"

# mpicxx: C++ programs against the same library (mpi.h's C API inside extern "C")
like "$("$MPICC" mpicxx -show -O2 -o x x.cc)" "^c\+\+ -I.*/out/include -O2 -o x x.cc -L.*/out/lib -lmpi -ltransport -lpmi -lm$" \
	"mpicxx -show: the C++ compiler, the same flags"
if command -v c++ >/dev/null; then
	"$MPICC" mpicxx -Wall -Wextra -Werror -O2 -o "$T/hello_cc" "$src/hello_cxx.cc"
	ok $? "a C++ program compiles warning-free against mpi.h"
	is "$(lkx -n 3 "$T/hello_cc")" "c++ hello: 3 ranks, sum 3" "and runs under lamkit mpiexec"
fi
ln -s "$MPICC" "$T/mpic++"
like "$("$T/mpic++" -show x.cc)" "^c\+\+ " "the mpic++ symlink works"
out=$("$MPICC" mpicxx -musl x.cc 2>&1); rc=$?
is "$rc" 100 "mpicxx -musl is refused"
like "$out" "-musl is for C programs only" "in one line that says why"
done_testing
