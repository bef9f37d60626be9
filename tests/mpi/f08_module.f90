! tests/mpi/f08_module.f90: Fortran 2008 through `use mpi_f08`: derived-type handles and
! their comparison, optional ierror, TYPE(MPI_Status), non-contiguous array sections as
! buffers (blocking and nonblocking), a user reduction operation written in Fortran, and
! MPI_COMM_SPLIT. Prints "f08_module: OK size=N" on rank 0.
module f08_checks
  use mpi_f08
  use, intrinsic :: iso_c_binding, only: c_ptr, c_f_pointer
  implicit none
  integer :: errs = 0
contains
  subroutine bad(what)
    character(len=*), intent(in) :: what
    errs = errs + 1
    print *, 'f08_module: FAILED ', what
  end subroutine

  ! inout = inout * in, on integers
  subroutine times(invec, inoutvec, len, datatype)
    type(c_ptr), value :: invec, inoutvec
    integer :: len
    type(MPI_Datatype) :: datatype
    integer, pointer :: a(:), b(:)
    call c_f_pointer(invec, a, [len])
    call c_f_pointer(inoutvec, b, [len])
    b = b * a
  end subroutine
end module

program f08_module
  use mpi_f08
  use f08_checks
  implicit none
  integer :: rank, np, ierr, i, next, prev, x, y
  double precision :: a(6, 8), col(8), back(6, 8)
  integer :: got(4)
  type(MPI_Request) :: reqs(2)
  type(MPI_Status) :: st
  type(MPI_Comm) :: half
  type(MPI_Op) :: op

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, np, ierr)
  if (ierr /= MPI_SUCCESS) call bad('ierror')
  next = mod(rank + 1, np)
  prev = mod(rank + np - 1, np)

  ! row 3 of a (a stride of 6 doubles) to the next rank, received into row 5 of back
  a = rank
  a(3, :) = [(rank * 10 + i, i = 1, 8)]
  back = -1
  call MPI_Irecv(back(5, :), 8, MPI_DOUBLE_PRECISION, prev, 1, MPI_COMM_WORLD, reqs(1))
  call MPI_Isend(a(3, :), 8, MPI_DOUBLE_PRECISION, next, 1, MPI_COMM_WORLD, reqs(2))
  call MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE)
  if (any(back(5, :) /= [(prev * 10 + i, i = 1, 8)])) call bad('strided irecv')
  if (any(back(4, :) /= -1) .or. any(back(6, :) /= -1)) call bad('strided irecv overrun')
  if (reqs(1) /= MPI_REQUEST_NULL) call bad('request null')

  ! every other element of row 3 (stride 12 doubles), blocking, with a status
  call MPI_Sendrecv(a(3, 1:8:2), 4, MPI_DOUBLE_PRECISION, next, 2, col, 4, &
                    MPI_DOUBLE_PRECISION, prev, 2, MPI_COMM_WORLD, st)
  if (any(col(1:4) /= [(prev * 10 + i, i = 1, 8, 2)])) call bad('strided sendrecv')
  if (st%MPI_SOURCE /= prev .or. st%MPI_TAG /= 2) call bad('status fields')

  ! a Fortran reduction operation
  call MPI_Op_create(times, .true., op)
  x = rank + 2
  call MPI_Allreduce(x, y, 1, MPI_INTEGER, op, MPI_COMM_WORLD)
  if (y /= product([(i, i = 2, np + 1)])) call bad('user op')
  call MPI_Op_free(op)
  if (op /= MPI_OP_NULL) call bad('op_free')

  ! a split communicator, gathered
  call MPI_Comm_split(MPI_COMM_WORLD, mod(rank, 2), rank, half)
  if (half == MPI_COMM_NULL) call bad('split')
  got = -1
  call MPI_Gather(rank, 1, MPI_INTEGER, got, 1, MPI_INTEGER, 0, MPI_COMM_WORLD)
  if (rank == 0 .and. np <= 4) then
    if (any(got(1:np) /= [(i, i = 0, np - 1)])) call bad('gather')
  end if
  call MPI_Comm_free(half)

  call MPI_Allreduce(MPI_IN_PLACE, errs, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  if (rank == 0 .and. errs == 0) print '(a,i0)', 'f08_module: OK size=', np
  call MPI_Finalize()
  if (errs /= 0) stop 1
end program
