C tests/mpi/f77_basics.f: FORTRAN 77 through mpif.h (fixed form): point-to-point with
C requests and statuses, MPI_IN_PLACE, LOGICAL results, strings, a Cartesian topology
C with LOGICAL periods, a vector datatype and a predefined attribute. Prints
C "f77_basics: OK size=N" on rank 0, or one line per failed check (exit 1).
      PROGRAM F77B
      IMPLICIT NONE
      INCLUDE 'mpif.h'
      INTEGER IERR, RANK, NP, ERRS, I, NEXT, PREV, ALL
      INTEGER SBUF(10), RBUF(10), REQS(2), STATS(MPI_STATUS_SIZE, 2)
      INTEGER ST(MPI_STATUS_SIZE), CNT, CART, DIMS(2), COORDS(2)
      INTEGER VTYPE, MAT(4, 3), COL(3), NLEN
      INTEGER(KIND=MPI_ADDRESS_KIND) TAGUB
      LOGICAL FLAG, PERIODS(2)
      CHARACTER*(MPI_MAX_OBJECT_NAME) NAME
      DOUBLE PRECISION T0
      ERRS = 0
      CALL MPI_INIT(IERR)
      CALL MPI_COMM_RANK(MPI_COMM_WORLD, RANK, IERR)
      CALL MPI_COMM_SIZE(MPI_COMM_WORLD, NP, IERR)
      T0 = MPI_WTIME()
      NEXT = MOD(RANK + 1, NP)
      PREV = MOD(RANK + NP - 1, NP)
C     a ring: Irecv + Isend, MPI_WAITALL with statuses
      DO I = 1, 10
         SBUF(I) = RANK * 100 + I
         RBUF(I) = -1
      END DO
      CALL MPI_IRECV(RBUF, 10, MPI_INTEGER, PREV, 5, MPI_COMM_WORLD,
     &     REQS(1), IERR)
      CALL MPI_ISEND(SBUF, 10, MPI_INTEGER, NEXT, 5, MPI_COMM_WORLD,
     &     REQS(2), IERR)
      CALL MPI_WAITALL(2, REQS, STATS, IERR)
      IF (IERR .NE. MPI_SUCCESS) CALL BAD(ERRS, 'waitall ierr')
      IF (REQS(1) .NE. MPI_REQUEST_NULL) CALL BAD(ERRS, 'req null')
      IF (STATS(MPI_SOURCE, 1) .NE. PREV) CALL BAD(ERRS, 'source')
      IF (STATS(MPI_TAG, 1) .NE. 5) CALL BAD(ERRS, 'tag')
      CALL MPI_GET_COUNT(STATS(1, 1), MPI_INTEGER, CNT, IERR)
      IF (CNT .NE. 10) CALL BAD(ERRS, 'get_count')
      IF (RBUF(10) .NE. PREV * 100 + 10) CALL BAD(ERRS, 'ring data')
C     MPI_TEST on a null request: flag .TRUE.; MPI_IPROBE with nothing there: .FALSE.
      CALL MPI_TEST(REQS(1), FLAG, ST, IERR)
      IF (.NOT. FLAG) CALL BAD(ERRS, 'test flag')
      CALL MPI_IPROBE(MPI_ANY_SOURCE, 99, MPI_COMM_WORLD, FLAG,
     &     MPI_STATUS_IGNORE, IERR)
      IF (FLAG) CALL BAD(ERRS, 'iprobe flag')
C     MPI_IN_PLACE
      ALL = RANK + 1
      CALL MPI_ALLREDUCE(MPI_IN_PLACE, ALL, 1, MPI_INTEGER, MPI_SUM,
     &     MPI_COMM_WORLD, IERR)
      IF (ALL .NE. NP * (NP + 1) / 2) CALL BAD(ERRS, 'allreduce')
C     strings: blank-padded out, trailing blanks dropped in
      CALL MPI_COMM_SET_NAME(MPI_COMM_WORLD, 'ring world   ', IERR)
      CALL MPI_COMM_GET_NAME(MPI_COMM_WORLD, NAME, NLEN, IERR)
      IF (NAME .NE. 'ring world' .OR. NLEN .NE. 10)
     &     CALL BAD(ERRS, 'comm name')
C     Cartesian topology, LOGICAL periods in and out
      DIMS(1) = 0
      DIMS(2) = 1
      CALL MPI_DIMS_CREATE(NP, 2, DIMS, IERR)
      PERIODS(1) = .TRUE.
      PERIODS(2) = .FALSE.
      CALL MPI_CART_CREATE(MPI_COMM_WORLD, 2, DIMS, PERIODS, .FALSE.,
     &     CART, IERR)
      PERIODS(1) = .FALSE.
      PERIODS(2) = .TRUE.
      CALL MPI_CART_GET(CART, 2, DIMS, PERIODS, COORDS, IERR)
      IF (.NOT. PERIODS(1) .OR. PERIODS(2)) CALL BAD(ERRS, 'periods')
      IF (COORDS(1) .NE. RANK) CALL BAD(ERRS, 'coords')
      CALL MPI_COMM_FREE(CART, IERR)
      IF (CART .NE. MPI_COMM_NULL) CALL BAD(ERRS, 'comm_free')
C     a column of a 4x3 matrix as a vector type, rank 0 to the last
      CALL MPI_TYPE_VECTOR(3, 1, 4, MPI_INTEGER, VTYPE, IERR)
      CALL MPI_TYPE_COMMIT(VTYPE, IERR)
      IF (RANK .EQ. 0) THEN
         DO I = 1, 3
            MAT(1, I) = 0
            MAT(2, I) = 10 * I
         END DO
         CALL MPI_SEND(MAT(2, 1), 1, VTYPE, NP - 1, 6, MPI_COMM_WORLD,
     &        IERR)
      END IF
      IF (RANK .EQ. NP - 1) THEN
         CALL MPI_RECV(COL, 3, MPI_INTEGER, 0, 6, MPI_COMM_WORLD, ST,
     &        IERR)
         IF (COL(3) .NE. 30) CALL BAD(ERRS, 'vector')
      END IF
      CALL MPI_TYPE_FREE(VTYPE, IERR)
C     a predefined attribute: its value, not a pointer to it
      CALL MPI_COMM_GET_ATTR(MPI_COMM_WORLD, MPI_TAG_UB, TAGUB, FLAG,
     &     IERR)
      IF (.NOT. FLAG .OR. TAGUB .LT. 32767) CALL BAD(ERRS, 'tag_ub')
      IF (MPI_WTIME() .LT. T0) CALL BAD(ERRS, 'wtime')
      CALL MPI_ALLREDUCE(MPI_IN_PLACE, ERRS, 1, MPI_INTEGER, MPI_SUM,
     &     MPI_COMM_WORLD, IERR)
      IF (RANK .EQ. 0 .AND. ERRS .EQ. 0)
     &     PRINT '(A,I0)', 'f77_basics: OK size=', NP
      CALL MPI_FINALIZE(IERR)
      IF (ERRS .NE. 0) STOP 1
      END

      SUBROUTINE BAD(ERRS, WHAT)
      INTEGER ERRS
      CHARACTER*(*) WHAT
      ERRS = ERRS + 1
      PRINT *, 'f77_basics: FAILED ', WHAT
      END
