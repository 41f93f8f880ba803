/* Test library named like cuBLAS (build/tests/libcublas.so.13): it takes device memory for itself, as
 * cublasCreate does for its workspace, so the report can be checked to name the library. */
#include <cuda.h>

int fake_cublas_create(size_t workspace)
{
    CUdeviceptr p;
    return cuMemAlloc(&p, workspace) == CUDA_SUCCESS ? 0 : -1;
}
