#!/bin/sh
# lib/mpif/gen.sh: the build step that generates the Fortran bindings (GN action of
# lib/mpif/BUILD.gn): runs gen.lua with the host Lua, and copies gfortran's
# ISO_Fortran_binding.h (the TS 29113 descriptor layout of this compiler) next to the output.
# usage: gen.sh LUA GEN_LUA MPI_H BINDINGS TEMPLATE_DIR OUT_DIR
set -eu
lua=$1 gen=$2 mpi_h=$3 bindings=$4 tdir=$5 out=$6
mkdir -p "$out"
"$lua" "$gen" "$mpi_h" "$bindings" "$tdir" "$out"
fc=${LAMKIT_FC:-gfortran}
inc=$("$fc" -print-file-name=include 2>/dev/null) || inc=
if [ ! -f "$inc/ISO_Fortran_binding.h" ]; then
	echo "lib/mpif: no ISO_Fortran_binding.h from $fc (-print-file-name=include: '$inc');" \
		"install gfortran (packaging/setup-deps)" >&2
	exit 1
fi
cp "$inc/ISO_Fortran_binding.h" "$out/ISO_Fortran_binding.h.tmp"
mv "$out/ISO_Fortran_binding.h.tmp" "$out/ISO_Fortran_binding.h"
