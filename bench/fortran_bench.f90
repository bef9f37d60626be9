! bench/fortran_bench.f90: what bench/fortran measures, through `use mpi` (the mpif.h calls):
! the cost of calls with little to do (MPI_Comm_rank, MPI_Test on a null request, an MPI_Irecv
! + MPI_Isend + MPI_Waitall to oneself), then the ping-pong half round trip and the allreduce
! (MPI_SUM of doubles) for 0 B to 4 MiB between two ranks; the best of a few rounds, one line
! "WHAT BYTES MICROSECONDS" each. bench/fortran makes the mpi_f08 twin from it with sed, and
! fortran_bench.c is the C twin.
program fbench
  use mpi
  implicit none
  integer, parameter :: maxb = 4 * 1024 * 1024
  integer :: ierr, rank, np, i, k, r, n, it, req, reqs(2), peer, rnk
  integer :: sizes(9) = [0, 8, 64, 512, 4096, 32768, 262144, 1048576, maxb]
  double precision :: t0, best, t
  double precision, allocatable :: a(:), b(:)
  character, allocatable :: buf(:)
  logical :: flag
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, np, ierr)
  allocate(buf(maxb), a(maxb / 8 + 1), b(maxb / 8 + 1))
  buf = 'x'
  a = 1
  peer = 1 - rank
  if (rank == 0) print '(a,i0)', '# fortran_bench ranks=', np
  ! calls with nothing to do: best of 5 rounds of n calls
  n = 2000000
  best = huge(1d0)
  do r = 1, 5
    t0 = MPI_Wtime()
    do i = 1, n
      call MPI_Comm_rank(MPI_COMM_WORLD, rnk, ierr)
    end do
    best = min(best, MPI_Wtime() - t0)
  end do
  if (rank == 0) print '(a,i0,f12.5)', 'call_comm_rank ', 0, best / n * 1d6
  best = huge(1d0)
  req = MPI_REQUEST_NULL
  do r = 1, 5
    t0 = MPI_Wtime()
    do i = 1, n
      call MPI_Test(req, flag, MPI_STATUS_IGNORE, ierr)
    end do
    best = min(best, MPI_Wtime() - t0)
  end do
  if (rank == 0) print '(a,i0,f12.5)', 'call_test_null ', 0, best / n * 1d6
  n = 200000
  best = huge(1d0)
  do r = 1, 5
    t0 = MPI_Wtime()
    do i = 1, n
      call MPI_Irecv(buf, 8, MPI_BYTE, 0, 1, MPI_COMM_SELF, reqs(1), ierr)
      call MPI_Isend(buf(9), 8, MPI_BYTE, 0, 1, MPI_COMM_SELF, reqs(2), ierr)
      call MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE, ierr)
    end do
    best = min(best, MPI_Wtime() - t0)
  end do
  if (rank == 0) print '(a,i0,f12.5)', 'call_self_isend ', 8, best / n * 1d6
  if (np /= 2) goto 99
  ! ping-pong and allreduce
  do k = 1, size(sizes)
    it = max(20, min(20000, 400000000 / (sizes(k) + 20000)))
    best = huge(1d0)
    do r = 1, 3
      call MPI_Barrier(MPI_COMM_WORLD, ierr)
      t0 = MPI_Wtime()
      do i = 1, it
        if (rank == 0) then
          call MPI_Send(buf, sizes(k), MPI_BYTE, peer, 2, MPI_COMM_WORLD, ierr)
          call MPI_Recv(buf, sizes(k), MPI_BYTE, peer, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
        else
          call MPI_Recv(buf, sizes(k), MPI_BYTE, peer, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
          call MPI_Send(buf, sizes(k), MPI_BYTE, peer, 2, MPI_COMM_WORLD, ierr)
        end if
      end do
      t = (MPI_Wtime() - t0) / it / 2
      call MPI_Allreduce(MPI_IN_PLACE, t, 1, MPI_DOUBLE_PRECISION, MPI_MAX, MPI_COMM_WORLD, ierr)
      best = min(best, t)
    end do
    if (rank == 0) print '(a,i0,f12.3)', 'pingpong ', sizes(k), best * 1d6
  end do
  do k = 1, size(sizes)
    it = max(20, min(20000, 400000000 / (sizes(k) + 20000)))
    best = huge(1d0)
    do r = 1, 3
      call MPI_Barrier(MPI_COMM_WORLD, ierr)
      t0 = MPI_Wtime()
      do i = 1, it
        call MPI_Allreduce(a, b, sizes(k) / 8, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
      end do
      t = (MPI_Wtime() - t0) / it
      call MPI_Allreduce(MPI_IN_PLACE, t, 1, MPI_DOUBLE_PRECISION, MPI_MAX, MPI_COMM_WORLD, ierr)
      best = min(best, t)
    end do
    if (rank == 0) print '(a,i0,f12.3)', 'allreduce ', sizes(k), best * 1d6
  end do
99 call MPI_Finalize(ierr)
end program
