! tests/mpi/f90_module.f90: Fortran 90 through `use mpi`: MPI_WAITANY's 1-based index,
! MPI_BOTTOM with absolute addresses, MPI_MAXLOC on MPI_2INTEGER, an attribute keyval whose
! copy callback is Fortran (run by MPI_COMM_DUP), MPI_ERRORS_RETURN and MPI_ERROR_STRING,
! MPI_SIZEOF and MPI_TYPE_CREATE_F90_REAL. Prints "f90_module: OK size=N" on rank 0.
module f90_checks
  implicit none
  integer :: errs = 0
contains
  subroutine bad(what)
    character(len=*), intent(in) :: what
    errs = errs + 1
    print *, 'f90_module: FAILED ', what
  end subroutine
end module

subroutine copy_fn(oldcomm, keyval, extra, valin, valout, flag, ierr)
  use mpi
  implicit none
  integer :: oldcomm, keyval, ierr
  integer(kind=MPI_ADDRESS_KIND) :: extra, valin, valout
  logical :: flag
  valout = valin + extra
  flag = .true.
  ierr = MPI_SUCCESS
end subroutine

program f90_module
  use mpi
  use f90_checks
  implicit none
  external :: copy_fn
  integer :: ierr, rank, np, i, idx, reqs(3), st(MPI_STATUS_SIZE), rbuf(3), sbuf(3)
  integer :: pair(2), best(2), stype, blens(2), types(2), key, dup, sz, rtype, slen
  integer(kind=MPI_ADDRESS_KIND) :: disps(2), val, extra
  ! VOLATILE: the compiler cannot see that MPI_Bcast(MPI_BOTTOM, ...) reads and writes them
  double precision, volatile :: d
  integer, volatile :: k
  logical :: flag
  character(len=MPI_MAX_ERROR_STRING) :: msg

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, np, ierr)

  ! MPI_WAITANY: a null request first, the one that completes is request 2 (1-based)
  reqs(1) = MPI_REQUEST_NULL
  reqs(3) = MPI_REQUEST_NULL
  sbuf = rank
  call MPI_Irecv(rbuf, 3, MPI_INTEGER, rank, 1, MPI_COMM_WORLD, reqs(2), ierr)
  call MPI_Send(sbuf, 3, MPI_INTEGER, rank, 1, MPI_COMM_WORLD, ierr)
  call MPI_Waitany(3, reqs, idx, st, ierr)
  if (idx /= 2 .or. st(MPI_TAG) /= 1) call bad('waitany index')
  call MPI_Waitany(3, reqs, idx, st, ierr)
  if (idx /= MPI_UNDEFINED) call bad('waitany undefined') ! (MPICH 4.0.2: MPI_UNDEFINED + 1)

  ! MPI_BOTTOM: a struct type of absolute addresses of two variables
  call MPI_Get_address(d, disps(1), ierr)
  call MPI_Get_address(k, disps(2), ierr)
  blens = 1
  types = [MPI_DOUBLE_PRECISION, MPI_INTEGER]
  call MPI_Type_create_struct(2, blens, disps, types, stype, ierr)
  call MPI_Type_commit(stype, ierr)
  d = 2.5d0 + rank
  k = 7 + rank
  call MPI_Bcast(MPI_BOTTOM, 1, stype, np - 1, MPI_COMM_WORLD, ierr)
  if (d /= 2.5d0 + np - 1 .or. k /= 7 + np - 1) call bad('MPI_BOTTOM bcast')
  call MPI_Type_free(stype, ierr)

  ! MPI_MAXLOC on (value, index) pairs
  pair = [mod(rank * 7, np), rank]
  call MPI_Allreduce(pair, best, 1, MPI_2INTEGER, MPI_MAXLOC, MPI_COMM_WORLD, ierr)
  if (best(1) /= maxval([(mod(i * 7, np), i = 0, np - 1)])) call bad('maxloc value')

  ! a keyval with a Fortran copy callback: MPI_Comm_dup runs it
  extra = 1000
  call MPI_Comm_create_keyval(copy_fn, MPI_COMM_NULL_DELETE_FN, key, extra, ierr)
  val = 42
  call MPI_Comm_set_attr(MPI_COMM_WORLD, key, val, ierr)
  call MPI_Comm_dup(MPI_COMM_WORLD, dup, ierr)
  val = 0
  call MPI_Comm_get_attr(dup, key, val, flag, ierr)
  if (.not. flag .or. val /= 1042) call bad('copy callback')
  call MPI_Comm_free(dup, ierr)
  call MPI_Comm_delete_attr(MPI_COMM_WORLD, key, ierr)
  call MPI_Comm_free_keyval(key, ierr)

  ! errors returned, not fatal: a bad rank
  call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN, ierr)
  call MPI_Send(sbuf, 1, MPI_INTEGER, np + 5, 0, MPI_COMM_WORLD, ierr)
  if (ierr == MPI_SUCCESS) call bad('bad rank accepted')
  call MPI_Error_string(ierr, msg, slen, ierr)
  if (slen <= 0 .or. len_trim(msg) /= slen) call bad('error string')

  ! Fortran-only helpers
  call MPI_Sizeof(d, sz, ierr)
  if (sz /= 8) call bad('sizeof')
  call MPI_Type_create_f90_real(15, 300, rtype, ierr)
  call MPI_Type_size(rtype, sz, ierr)
  if (sz /= 8) call bad('f90 real')

  call MPI_Allreduce(MPI_IN_PLACE, errs, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (rank == 0 .and. errs == 0) print '(a,i0)', 'f90_module: OK size=', np
  call MPI_Finalize(ierr)
  if (errs /= 0) stop 1
end program
