#!/bin/bash
# t0515: lamkit mpifort and the Fortran bindings: -show, the symlinks, -musl refused in one
# line; mpif.h compiles in fixed form (-std=legacy) and free form; use mpi_f08 rejects a wrong
# argument type at compile time and use mpi a missing argument; and three Fortran programs
# (mpif.h, use mpi, use mpi_f08) and two MPI-IO programs (mpif.h, use mpi_f08: views, collective,
# nonblocking and ordered access, a Fortran file error handler and data representation) run
# under lamkit mpiexec; the I/O programs leave no file behind. In the asan variant the programs are
# linked against the sanitized libmpi and libmpifort (out/asan).
# timeout: 240
. "$(dirname "$0")/../lib/common.sh"
command -v gfortran >/dev/null || skip_all "no gfortran (packaging/setup-deps installs it)"
MF=$LAMKIT_TOP/out/lamkit # the build tree's include/ and lib/ sit next to out/lamkit
src=$LAMKIT_TOP/tests/mpi
cd "$T" || exit 1

like "$("$MF" mpifort -show -O2 -o x x.f90)" \
	"^gfortran -I.*/out/include -fallow-argument-mismatch -O2 -o x x.f90 -L.*/out/lib -lmpifort -lmpi -ltransport -lpmi -lm$" \
	"-show: gfortran with the include dir (mpif.h, the .mod files) and libmpifort before libmpi"
like "$("$MF" mpifort -show -c x.f)" "^gfortran -I[^ ]*include -fallow-argument-mismatch -c x.f$" \
	"compile-only gets no libraries"
like "$(LAMKIT_FC=flang "$MF" mpifort -show -c x.f)" "^flang -I[^ ]*include -c x.f$" \
	"LAMKIT_FC picks the compiler (gfortran's flag is not given to another one)"
for l in mpifort mpif90 mpif77; do ln -s "$MF" "$T/$l"; done
like "$("$T/mpif77" -show x.f)" "^gfortran " "the mpif77 symlink works"
like "$("$T/mpif90" -show x.f90)" "-lmpifort" "the mpif90 symlink works"
out=$("$MF" mpifort -musl x.f90 2>&1)
is "$?" 100 "mpifort -musl is refused"
like "$out" "^lamkit mpifort: -musl is for C programs only: Debian's Fortran runtime" \
	"in one line that says why"
is "$(printf '%s\n' "$out" | wc -l)" 1 "one line"

# mpif.h: fixed form, FORTRAN 77 as -std=legacy takes it, and free form
cat >fixed.f <<'EOF'
      PROGRAM FIXED
      IMPLICIT NONE
      INCLUDE 'mpif.h'
      INTEGER IERR, STATUS(MPI_STATUS_SIZE)
      DOUBLE PRECISION T
      CALL MPI_INIT(IERR)
      T = MPI_WTIME()
      CALL MPI_SEND(T, 1, MPI_DOUBLE_PRECISION, 0, MPI_ANY_TAG,
     &     MPI_COMM_WORLD, IERR)
      CALL MPI_RECV(T, 1, MPI_DOUBLE_PRECISION, MPI_ANY_SOURCE, 0,
     &     MPI_COMM_WORLD, STATUS, IERR)
      CALL MPI_FINALIZE(IERR)
      END
EOF
err=$("$MF" mpifort -std=legacy -c fixed.f 2>&1); ok $? "mpif.h compiles in fixed form with -std=legacy"
[ -n "$err" ] && diag "$err"
cat >free.f90 <<'EOF'
program free
  implicit none
  include 'mpif.h'
  integer :: ierr, rank
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Finalize(ierr)
end program
EOF
err=$("$MF" mpifort -std=f2008 -c free.f90 2>&1); ok $? "mpif.h compiles in free form (-std=f2008)"
[ -n "$err" ] && diag "$err"
awk 'length($0) > 72 { bad = 1 } END { exit bad }' "$LAMKIT_TOP/out/include/mpif.h"
ok $? "no line of mpif.h goes past column 72"

# compile-time checks of the modules
cat >wrong08.f90 <<'EOF'
program wrong
  use mpi_f08
  implicit none
  integer :: buf(4)
  call MPI_Init()
  call MPI_Send(buf, 4, MPI_INTEGER, 0, 0, 5)
  call MPI_Finalize()
end program
EOF
err=$("$MF" mpifort -c wrong08.f90 2>&1)
is "$?" 1 "use mpi_f08: an INTEGER where MPI_Send takes TYPE(MPI_Comm) does not compile"
like "$err" "no specific subroutine for the generic .*mpi_send" "gfortran names the call"
sed 's/, 0, 0, 5)/, 0, 0, MPI_COMM_WORLD)/' wrong08.f90 >right08.f90
err=$("$MF" mpifort -c right08.f90 2>&1); ok $? "and the right call does"
[ -n "$err" ] && diag "$err"
cat >wrong90.f90 <<'EOF'
program wrong
  use mpi
  implicit none
  integer :: ierr, rank
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Finalize(ierr)
end program
EOF
err=$("$MF" mpifort -c wrong90.f90 2>&1)
is "$?" 1 "use mpi: MPI_Comm_rank without ierror does not compile (explicit interfaces)"
like "$err" "[Mm]issing actual argument .*ierror" "gfortran names the argument"

# the programs
if [ "$LAMKIT_VARIANT" = asan ]; then
	A=$LAMKIT_TOP/out/asan/obj/lib
	build() { # out src
		gfortran -O1 -g -I"$LAMKIT_TOP/out/include" -fallow-argument-mismatch -c -o "$1.o" "$2" &&
			clang -fsanitize=address,undefined -o "$1" "$1.o" "$A/mpif/libmpifort.a" \
				"$A/mpi/libmpi.a" "$A/transport/libtransport.a" "$A/pmi/libpmi.a" -lgfortran -lm
	}
else
	build() { "$MF" mpifort -O2 -Wall -Wno-unused-dummy-argument -o "$1" "$2"; }
fi
# (the MPI-IO programs take a path prefix for their files, which they delete)
for p in f77_basics.f f90_module.f90 f08_module.f90 f77_io.f f08_io.f90; do
	b=${p%.*}
	err=$(build "$b" "$src/$p" 2>&1); ok $? "$p builds"
	[ -n "$err" ] && diag "$err"
	out=$(lkx -n 3 "$T/$b" "$T/$b.file" 2>&1); rc=$?
	is "$rc" 0 "$b -n 3 exits 0"
	like "$out" "^$b: OK size=3$" "$b: every check passes"
	[ $rc -ne 0 ] && diag "$out"
done
left=$(ls "$T"/*.file* 2>/dev/null)
is "$left" "" "the MPI-IO programs left no file (DELETE_ON_CLOSE, MPI_FILE_DELETE)"
out=$(lkx -n 2 "$T/f08_module" 2>&1)
like "$out" "^f08_module: OK size=2$" "f08_module -n 2"
done_testing
