#!/bin/sh
# lib/mpif/fc.sh: compile the Fortran modules (GN action of lib/mpif/BUILD.gn): mpi.f90 and
# mpi_f08.f90 into OUT_DIR/mpi.mod, mpi_f08.mod and their objects (the module procedures).
# usage: fc.sh SRC_DIR OUT_DIR
set -eu
src=$1 out=$2
fc=${LAMKIT_FC:-gfortran}
mkdir -p "$out"
for m in mpi mpi_f08; do
	"$fc" -O2 -fPIC -ffree-line-length-none -Wno-c-binding-type -J "$out" -c "$src/$m.f90" \
		-o "$out/$m.o.tmp"
	mv "$out/$m.o.tmp" "$out/$m.o"
done
