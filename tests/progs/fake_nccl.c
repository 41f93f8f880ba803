/* Test library named like NCCL (build/tests/libnccl.so.2): a communicator's buffers, made the way NCCL
 * makes them with the VMM API (a handle on the rank's device, reserved address space, a mapping made
 * accessible), and a proxy's plain allocation, so the report can be checked to name NCCL per device. */
#include <cuda.h>
#include <string.h>

int fake_nccl_comm_init(int device, size_t buffers, size_t proxy)
{
    CUmemAllocationProp prop;
    memset(&prop, 0, sizeof prop);
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = device;
    CUmemGenericAllocationHandle h;
    CUdeviceptr va, p;
    CUmemAccessDesc access;
    memset(&access, 0, sizeof access);
    access.location = prop.location;
    access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    if (cuMemCreate(&h, buffers, &prop, 0) != CUDA_SUCCESS || cuMemAddressReserve(&va, buffers, 0, 0, 0) != CUDA_SUCCESS ||
        cuMemMap(va, buffers, 0, h, 0) != CUDA_SUCCESS || cuMemSetAccess(va, buffers, &access, 1) != CUDA_SUCCESS)
        return -1;
    return cuMemAlloc(&p, proxy) == CUDA_SUCCESS ? 0 : -1;
}
