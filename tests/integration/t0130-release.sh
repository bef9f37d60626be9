#!/bin/bash
# t0130: the release tarball unpacks into a working product with its licences.
# timeout: 120
. "$(dirname "$0")/../lib/common.sh"
[ "$LAMKIT_VARIANT" = musl ] || skip_all "the release is built from the musl binary"
tb=$("$LAMKIT_TOP/packaging/release" "$T/rel" 2>&1 | tail -n 1); ok $? "packaging/release runs"
like "$tb" "lamkit-[0-9.]+-x86_64-linux\.tar\.gz$" "tarball is named lamkit-<version>-x86_64-linux.tar.gz"
mkdir "$T/u" && tar -C "$T/u" -xzf "$tb"; ok $? "tarball unpacks"
d=$(echo "$T"/u/lamkit-*)
out=$(env -i "$d/bin/lamboot" --help); ok $? "bin/lamboot --help runs"
like "$out" "lamkit boot" "and is the boot command"
for l in lamgrow recon wipe lamhalt lamnodes lamshrink lamclean mpitask tping lamexec mpiexec mpirun \
	mpicc atollrun; do
	[ "$(readlink "$d/bin/$l")" = lamkit ]; ok $? "bin/$l links to lamkit"
done
out=$(MANWIDTH=100 man -M "$d/share/man" -P cat lamkit-boot 2>&1)
like "$out" "lamkit-boot - start one agent per node of a boot schema" "man lamkit-boot from the tarball"
like "$out" "--ship" "it is the boot command's help"
like "$(MANWIDTH=100 man -M "$d/share/man" -P cat lamboot 2>&1)" "LAMKIT-BOOT" "man lamboot is the same page"
like "$(MANWIDTH=100 man -M "$d/share/man" -P cat 5 lamkit-schema 2>&1)" "ship = \"auto\"" \
	"man 5 lamkit-schema: the schema format"
like "$(MANWIDTH=100 man -M "$d/share/man" -P cat lamkit 2>&1)" "shrink +take one node out" \
	"man lamkit lists the commands"
ok "$([ -f "$d/share/bash-completion/completions/lamkit" ] &&
	[ -f "$d/share/zsh/site-functions/_lamkit" ]; echo $?)" "bash and zsh completion shipped"
ok "$([ -s "$d/share/licenses/LICENSE.lua" ] && grep -q 'Lua.org, PUC-Rio' "$d/share/licenses/LICENSE.lua"; echo $?)" "Lua licence included"
ok "$([ -s "$d/share/licenses/LICENSE.libsodium" ]; echo $?)" "libsodium licence included"
ok "$([ -s "$d/share/licenses/LICENSE.openpmix" ] && [ -s "$d/share/licenses/LICENSE.libevent" ] &&
	[ -s "$d/share/licenses/LICENSE.hwloc" ]; echo $?)" "OpenPMIx, libevent and hwloc licences included"
cd "$T" && printf '#include <mpi.h>\n#include <stdio.h>\nint main(int c, char **v) { int r; MPI_Init(&c, &v); MPI_Comm_rank(MPI_COMM_WORLD, &r); printf("r%%d\\n", r); MPI_Finalize(); return 0; }\n' >m.c
"$d/bin/mpicc" -musl -o "$T/m" m.c; ok $? "the release's mpicc -musl finds include/ and lib/ next to bin/"
is "$("$d/bin/mpiexec" -n 2 "$T/m" | sort | tr '\n' ' ')" "r0 r1 " "and the program runs under the release's mpiexec"
# Atollrun: the headers and libatollrun.a build the shipped porttest examples (C and C++)
e=$d/share/lamkit/examples/atollrun
cc -O2 -o "$T/pt" -I"$d/include" "$e/porttest.c" -L"$d/lib" -latollrun; ok $? "porttest.c builds against the release's atollrun.h and libatollrun.a"
out=$(cd "$T" && HOME="$T" timeout 30 "$d/bin/atollrun" -p 3 "$T/pt" --test 2>&1)
like "$out" "porttest: OK" "and runs under the release's atollrun symlink (3 processes)"
c++ -O2 -o "$T/ptxx" -I"$d/include" "$e/porttest.cc" -L"$d/lib" -latollrun; ok $? "porttest.cc builds with atollrun.hpp"
out=$(cd "$T" && HOME="$T" timeout 30 "$d/bin/atollrun" -p 2 "$T/ptxx" 2>&1)
like "$out" "porttest\+\+: OK" "the C++ porttest runs"
out=$(cd "$T" && HOME="$T" timeout 30 "$d/bin/atollrun" -p 2 "$e/porttest" 2>&1)
like "$out" "porttest: OK" "the shipped static porttest runs"
file "$d/bin/lamkit" | grep -q 'stripped' && ! file "$d/bin/lamkit" | grep -q 'not stripped'; ok $? "binary is stripped"
done_testing
