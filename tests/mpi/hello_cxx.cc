// tests/mpi/hello_cxx.cc: a C++ MPI program (lamkit mpicxx): the C API of mpi.h from C++,
// std::vector for the buffer, one allgather, rank 0 prints the sum of the ranks.
#include <mpi.h>
#include <iostream>
#include <string>
#include <vector>
int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int r, n;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  std::vector<int> all(n);
  MPI_Allgather(&r, 1, MPI_INT, all.data(), 1, MPI_INT, MPI_COMM_WORLD);
  long s = 0;
  for (int v : all) s += v;
  if (r == 0) std::cout << "c++ hello: " << n << " ranks, sum " << s << std::endl;
  MPI_Finalize();
}
