/* Each rank reports its rank, the size of the world and the node it runs on; the ranks sum their numbers with
 * MPI_Allreduce and rank 0 prints the sum (0 + 1 + ... + size-1 when the ranks form one world). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    int rank, size, sum = -1, len;
    char node[MPI_MAX_PROCESSOR_NAME];
    const char *slurm_node = getenv("SLURMD_NODENAME");

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Get_processor_name(node, &len);
    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    printf("rank %d of %d on %s\n", rank, size, slurm_node ? slurm_node : node);
    if (rank == 0)
        printf("sum %d\n", sum);
    fflush(stdout);
    MPI_Finalize();
    return 0;
}
