! tests/mpi/f08_io.f90: MPI-IO through `use mpi_f08`: a collective write through a vector
! file view (block-cyclic), the file read back whole with an explicit offset, a nonblocking
! write, the shared file pointer (ordered writes), a file error handler written in Fortran, a
! data representation whose conversion functions are Fortran, and MPI_MODE_DELETE_ON_CLOSE.
! Takes a path prefix as its argument. Prints "f08_io: OK size=N" on rank 0.
module f08_io_checks
  use mpi_f08
  use, intrinsic :: iso_c_binding, only: c_ptr, c_f_pointer
  implicit none
  integer :: errs = 0, handled = 0, last_code = 0
  integer, parameter :: B = 4 ! integers per block
contains
  subroutine bad(what)
    character(len=*), intent(in) :: what
    errs = errs + 1
    print *, 'f08_io: FAILED ', what
  end subroutine

  subroutine on_error(file, error_code)
    type(MPI_File) :: file
    integer :: error_code
    handled = handled + 1
    last_code = error_code
  end subroutine

  ! the representation "plus": a file integer is the memory integer plus extra_state
  subroutine plus_write(userbuf, datatype, count, filebuf, position, extra_state, ierror)
    type(c_ptr), value :: userbuf, filebuf
    type(MPI_Datatype) :: datatype
    integer :: count, ierror
    integer(kind=MPI_OFFSET_KIND) :: position
    integer(kind=MPI_ADDRESS_KIND) :: extra_state
    integer, pointer :: u(:), f(:)
    call c_f_pointer(userbuf, u, [int(position) + count])
    call c_f_pointer(filebuf, f, [count])
    f = u(position + 1:position + count) + int(extra_state)
    ierror = MPI_SUCCESS
  end subroutine

  subroutine plus_read(userbuf, datatype, count, filebuf, position, extra_state, ierror)
    type(c_ptr), value :: userbuf, filebuf
    type(MPI_Datatype) :: datatype
    integer :: count, ierror
    integer(kind=MPI_OFFSET_KIND) :: position
    integer(kind=MPI_ADDRESS_KIND) :: extra_state
    integer, pointer :: u(:), f(:)
    call c_f_pointer(userbuf, u, [int(position) + count])
    call c_f_pointer(filebuf, f, [count])
    u(position + 1:position + count) = f - int(extra_state)
    ierror = MPI_SUCCESS
  end subroutine

  subroutine plus_extent(datatype, extent, extra_state, ierror)
    type(MPI_Datatype) :: datatype
    integer(kind=MPI_ADDRESS_KIND) :: extent, extra_state
    integer :: ierror
    extent = 4
    ierror = MPI_SUCCESS
  end subroutine
end module

program f08_io
  use f08_io_checks
  implicit none
  type(MPI_File) :: fh
  type(MPI_Datatype) :: ftype, et, ft
  type(MPI_Status) :: st
  type(MPI_Request) :: req
  type(MPI_Errhandler) :: eh
  integer :: rank, np, i, k, cnt, amode, blk, v
  integer :: wbuf(3 * B)
  integer, allocatable :: rbuf(:)
  integer(kind=MPI_OFFSET_KIND) :: fsize, disp, pos
  integer(kind=MPI_ADDRESS_KIND) :: extra
  character(len=MPI_MAX_DATAREP_STRING) :: rep
  character(len=200) :: prefix
  logical :: atom

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, np)
  call get_command_argument(1, prefix)
  allocate(rbuf(3 * B * np + np))

  ! 1. rank r owns blocks r, r+np, r+2np of B integers: a vector filetype, written collectively
  call MPI_Type_vector(3, B, B * np, MPI_INTEGER, ftype)
  call MPI_Type_commit(ftype)
  call MPI_File_open(MPI_COMM_WORLD, trim(prefix) // '.cyclic', &
                     MPI_MODE_CREATE + MPI_MODE_RDWR + MPI_MODE_DELETE_ON_CLOSE, MPI_INFO_NULL, fh)
  call MPI_File_get_amode(fh, amode)
  if (amode /= MPI_MODE_CREATE + MPI_MODE_RDWR + MPI_MODE_DELETE_ON_CLOSE) call bad('get_amode')
  call MPI_File_set_view(fh, int(rank * B * 4, MPI_OFFSET_KIND), MPI_INTEGER, ftype, 'native', &
                         MPI_INFO_NULL)
  call MPI_File_get_view(fh, disp, et, ft, rep)
  if (disp /= rank * B * 4 .or. et /= MPI_INTEGER .or. rep /= 'native') call bad('get_view')
  call MPI_Type_free(ft) ! a derived filetype comes back as a new datatype
  wbuf = [(rank * 1000 + i, i = 1, 3 * B)]
  call MPI_File_write_all(fh, wbuf, 3 * B, MPI_INTEGER, st)
  call MPI_Get_count(st, MPI_INTEGER, cnt)
  if (cnt /= 3 * B) call bad('write_all count')
  call MPI_File_get_position(fh, pos)
  if (pos /= 3 * B) call bad('get_position after write_all')
  call MPI_File_sync(fh)
  call MPI_Barrier(MPI_COMM_WORLD)
  call MPI_File_sync(fh)
  call MPI_File_get_size(fh, fsize)
  if (fsize /= 3 * B * np * 4) call bad('get_size')

  ! 2. the whole file read back through a plain view, at an explicit offset
  call MPI_File_set_view(fh, 0_MPI_OFFSET_KIND, MPI_INTEGER, MPI_INTEGER, 'native', MPI_INFO_NULL)
  rbuf = -1
  call MPI_File_read_at(fh, 0_MPI_OFFSET_KIND, rbuf, 3 * B * np, MPI_INTEGER, st)
  do k = 0, 3 * B * np - 1
    blk = k / B
    v = mod(blk, np) * 1000 + (blk / np) * B + mod(k, B) + 1
    if (rbuf(k + 1) /= v) then
      call bad('read_at: the file is not the block-cyclic array')
      exit
    end if
  end do

  ! 3. a nonblocking write past the end, waited for, read back by the next rank
  call MPI_File_iwrite_at(fh, int(3 * B * np + rank, MPI_OFFSET_KIND), rank + 77, 1, MPI_INTEGER, &
                          req)
  call MPI_Wait(req, st)
  call MPI_Barrier(MPI_COMM_WORLD)
  call MPI_File_read_at(fh, int(3 * B * np + mod(rank + 1, np), MPI_OFFSET_KIND), v, 1, &
                        MPI_INTEGER, st)
  if (v /= mod(rank + 1, np) + 77) call bad('iwrite_at')

  ! 4. a file error handler written in Fortran, and atomicity
  call MPI_File_create_errhandler(on_error, eh)
  call MPI_File_set_errhandler(fh, eh)
  call MPI_File_call_errhandler(fh, MPI_ERR_OTHER)
  if (handled /= 1 .or. last_code /= MPI_ERR_OTHER) call bad('the Fortran error handler')
  call MPI_Errhandler_free(eh)
  call MPI_File_set_atomicity(fh, .true.)
  call MPI_File_get_atomicity(fh, atom)
  if (.not. atom) call bad('atomicity')
  call MPI_File_close(fh)
  if (fh /= MPI_FILE_NULL) call bad('close sets MPI_FILE_NULL')

  ! 5. the shared file pointer: ordered writes land in rank order
  call MPI_File_open(MPI_COMM_WORLD, trim(prefix) // '.ordered', &
                     MPI_MODE_CREATE + MPI_MODE_RDWR + MPI_MODE_DELETE_ON_CLOSE, MPI_INFO_NULL, fh)
  wbuf(1:rank + 1) = rank
  call MPI_File_write_ordered(fh, wbuf, rank + 1, MPI_INTEGER, st)
  call MPI_File_get_position_shared(fh, pos)
  if (pos /= 4 * np * (np + 1) / 2) call bad('get_position_shared (bytes: the default view)')
  call MPI_File_read_at_all(fh, 0_MPI_OFFSET_KIND, rbuf, np * (np + 1) / 2, MPI_INTEGER, st)
  k = 1
  do i = 0, np - 1
    if (any(rbuf(k:k + i) /= i)) call bad('write_ordered: not in rank order')
    k = k + i + 1
  end do
  call MPI_File_close(fh)

  ! 6. a data representation with Fortran conversion functions
  extra = 5
  call MPI_Register_datarep('f08plus', plus_read, plus_write, plus_extent, extra)
  call MPI_File_open(MPI_COMM_WORLD, trim(prefix) // '.rep', &
                     MPI_MODE_CREATE + MPI_MODE_RDWR + MPI_MODE_DELETE_ON_CLOSE, MPI_INFO_NULL, fh)
  call MPI_File_set_view(fh, 0_MPI_OFFSET_KIND, MPI_INTEGER, MPI_INTEGER, 'f08plus', MPI_INFO_NULL)
  wbuf(1:2) = [rank * 10, rank * 10 + 1]
  call MPI_File_write_at_all(fh, int(2 * rank, MPI_OFFSET_KIND), wbuf, 2, MPI_INTEGER, st)
  call MPI_File_read_at_all(fh, int(2 * rank, MPI_OFFSET_KIND), rbuf, 2, MPI_INTEGER, st)
  if (rbuf(1) /= rank * 10 .or. rbuf(2) /= rank * 10 + 1) call bad('f08plus read back')
  call MPI_File_set_view(fh, 0_MPI_OFFSET_KIND, MPI_INTEGER, MPI_INTEGER, 'native', MPI_INFO_NULL)
  call MPI_File_read_at_all(fh, int(2 * rank, MPI_OFFSET_KIND), rbuf, 2, MPI_INTEGER, st)
  if (rbuf(1) /= rank * 10 + 5 .or. rbuf(2) /= rank * 10 + 6) &
    call bad('f08plus: the file holds the converted integers')
  call MPI_File_close(fh)

  call MPI_Type_free(ftype)
  deallocate(rbuf)
  call MPI_Allreduce(MPI_IN_PLACE, errs, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  if (rank == 0 .and. errs == 0) print '(a,i0)', 'f08_io: OK size=', np
  call MPI_Finalize()
  if (errs /= 0) stop 1
end program
