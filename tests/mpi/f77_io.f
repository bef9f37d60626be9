C     tests/mpi/f77_io.f: MPI-IO through mpif.h: each rank writes its rank at an explicit
C     offset (INTEGER(KIND=MPI_OFFSET_KIND)), the file is read back whole by every rank
C     through a view and collectively, a read past the end gets 0 elements, then rank 0
C     deletes it. Takes a path prefix as its argument. Prints "f77_io: OK size=N" on rank 0.
      PROGRAM F77IO
      IMPLICIT NONE
      INCLUDE 'mpif.h'
      INTEGER IERR, RANK, NP, FH, I, ERRS, V(64)
      INTEGER STATUS(MPI_STATUS_SIZE)
      INTEGER(KIND=MPI_OFFSET_KIND) OFF, FSIZE
      CHARACTER*200 PREFIX
      CALL MPI_INIT(IERR)
      CALL MPI_COMM_RANK(MPI_COMM_WORLD, RANK, IERR)
      CALL MPI_COMM_SIZE(MPI_COMM_WORLD, NP, IERR)
      CALL GET_COMMAND_ARGUMENT(1, PREFIX)
      ERRS = 0
      CALL MPI_FILE_OPEN(MPI_COMM_WORLD, TRIM(PREFIX) // '.f77',
     &     MPI_MODE_CREATE + MPI_MODE_WRONLY, MPI_INFO_NULL, FH, IERR)
      IF (IERR .NE. MPI_SUCCESS) ERRS = ERRS + 1
      OFF = RANK * 4
      CALL MPI_FILE_WRITE_AT(FH, OFF, RANK, 1, MPI_INTEGER, STATUS,
     &     IERR)
      CALL MPI_FILE_CLOSE(FH, IERR)
      IF (FH .NE. MPI_FILE_NULL) ERRS = ERRS + 1
      CALL MPI_BARRIER(MPI_COMM_WORLD, IERR)
      CALL MPI_FILE_OPEN(MPI_COMM_WORLD, TRIM(PREFIX) // '.f77',
     &     MPI_MODE_RDONLY, MPI_INFO_NULL, FH, IERR)
      CALL MPI_FILE_GET_SIZE(FH, FSIZE, IERR)
      IF (FSIZE .NE. NP * 4) ERRS = ERRS + 1
      CALL MPI_FILE_SET_VIEW(FH, 0_MPI_OFFSET_KIND, MPI_INTEGER,
     &     MPI_INTEGER, 'native', MPI_INFO_NULL, IERR)
      CALL MPI_FILE_READ_ALL(FH, V, NP, MPI_INTEGER, STATUS, IERR)
      DO I = 1, NP
         IF (V(I) .NE. I - 1) ERRS = ERRS + 1
      END DO
C     a read on a file opened read-only at a position past the end: 0 elements
      CALL MPI_FILE_READ(FH, V, 1, MPI_INTEGER, STATUS, IERR)
      CALL MPI_GET_COUNT(STATUS, MPI_INTEGER, I, IERR)
      IF (I .NE. 0) ERRS = ERRS + 1
      CALL MPI_FILE_CLOSE(FH, IERR)
      CALL MPI_BARRIER(MPI_COMM_WORLD, IERR)
      IF (RANK .EQ. 0) THEN
         CALL MPI_FILE_DELETE(TRIM(PREFIX) // '.f77', MPI_INFO_NULL,
     &        IERR)
         IF (IERR .NE. MPI_SUCCESS) ERRS = ERRS + 1
      END IF
      CALL MPI_ALLREDUCE(MPI_IN_PLACE, ERRS, 1, MPI_INTEGER, MPI_SUM,
     &     MPI_COMM_WORLD, IERR)
      IF (RANK .EQ. 0 .AND. ERRS .EQ. 0)
     &     PRINT '(A,I0)', 'f77_io: OK size=', NP
      IF (ERRS .NE. 0) PRINT *, 'f77_io: FAILED, errors: ', ERRS
      CALL MPI_FINALIZE(IERR)
      IF (ERRS .NE. 0) STOP 1
      END
