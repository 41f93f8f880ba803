/* The one list of CUDA entry points vramtrace knows: the driver variants it wraps, the runtime
 * calls it labels, and the driver calls the dumper makes. Everything else (enums, name tables,
 * real-pointer slots, the pointer router) is generated from these lists. */
#ifndef VT_FNS_H
#define VT_FNS_H

#include <cuda.h>
/* cuda.h makes cuGraphAddNode the newest variant's name; both are exported, and both are wrapped. */
#undef cuGraphAddNode

/* Exact exported variants that the driver-level hooks replace. Each list begins with the stream-ordered
 * calls, an allocation next to its free: under torch's cudaMallocAsync backend every tensor makes them,
 * and what is kept per entry point (the real pointer, the call counters) is then one cache line a pair,
 * not two (vt_real.c and vt_table.c check it at build time). */
#define VT_DRIVER_WRAPPED(X) \
    X(cuMemAllocAsync) X(cuMemFreeAsync) X(cuMemAllocAsync_ptsz) X(cuMemFreeAsync_ptsz) \
    X(cuMemAllocFromPoolAsync) X(cuMemAllocFromPoolAsync_ptsz) \
    X(cuMemAlloc_v2) X(cuMemAllocPitch_v2) X(cuMemAllocManaged) X(cuMemFree_v2) \
    X(cuMemAllocHost_v2) X(cuMemHostAlloc) X(cuMemFreeHost) \
    X(cuMemPoolCreate) X(cuMemPoolDestroy) X(cuMemPoolTrimTo) \
    X(cuMemCreate) X(cuMemRelease) X(cuMemRetainAllocationHandle) \
    X(cuMemMap) X(cuMemUnmap) X(cuMemAddressReserve) X(cuMemAddressFree) \
    X(cuMemHostRegister_v2) X(cuMemHostUnregister) \
    X(cuArrayCreate_v2) X(cuArray3DCreate_v2) X(cuArrayDestroy) \
    X(cuMipmappedArrayCreate) X(cuMipmappedArrayDestroy) \
    X(cuIpcOpenMemHandle_v2) X(cuIpcCloseMemHandle) X(cuMemPoolImportPointer) \
    X(cuImportExternalMemory) X(cuExternalMemoryGetMappedBuffer) X(cuDestroyExternalMemory) \
    X(cuGraphAddMemAllocNode) X(cuGraphAddMemFreeNode) X(cuGraphAddNode) X(cuGraphAddNode_v2) \
    X(cuGraphInstantiateWithFlags) \
    X(cuGraphInstantiateWithParams) X(cuGraphInstantiateWithParams_ptsz) X(cuGraphLaunch) X(cuGraphLaunch_ptsz) \
    X(cuGraphExecDestroy) X(cuGraphDestroy) \
    X(cuStreamBeginCapture_v2) X(cuStreamBeginCapture_v2_ptsz) X(cuStreamBeginCaptureToGraph) \
    X(cuStreamBeginCaptureToGraph_ptsz) X(cuStreamEndCapture) X(cuStreamEndCapture_ptsz) \
    X(cuGetProcAddress) X(cuGetProcAddress_v2) \
    X(cuDevicePrimaryCtxRetain) X(cuCtxCreate_v2) X(cuCtxCreate_v3) X(cuCtxCreate_v4)

/* Driver calls made by vramtrace itself (never wrapped). */
#define VT_DRIVER_HELPERS(X) \
    X(cuDeviceGetCount) X(cuDeviceTotalMem_v2) X(cuDevicePrimaryCtxGetState) \
    X(cuDevicePrimaryCtxRelease_v2) \
    X(cuCtxPushCurrent_v2) X(cuCtxPopCurrent_v2) X(cuMemGetInfo_v2) \
    X(cuPointerGetAttribute) X(cuMemPoolGetAttribute) X(cuDeviceGetDefaultMemPool) \
    X(cuDeviceGetPCIBusId) X(cuDeviceGetGraphMemAttribute) X(cuCtxGetDevice) \
    X(cuArrayGetMemoryRequirements) X(cuMipmappedArrayGetMemoryRequirements) X(cuMemGetAddressRange_v2) \
    X(cuCtxGetLimit) X(cuDeviceGetAttribute) X(cuStreamGetCaptureInfo_v3)

/* Runtime calls that label the driver allocation they cause. */
#define VT_RUNTIME_WRAPPED(X) \
    X(cudaMallocAsync) X(cudaFreeAsync) X(cudaMallocAsync_ptsz) X(cudaFreeAsync_ptsz) \
    X(cudaMallocFromPoolAsync) X(cudaMallocFromPoolAsync_ptsz) \
    X(cudaMalloc) X(cudaMallocPitch) X(cudaMallocManaged) X(cudaFree) \
    X(cudaMallocHost) X(cudaHostAlloc) X(cudaFreeHost)

/* vramtrace's own public hooks (include/vramtrace.h), and torch's blocks as its trace tracker tells them
 * (lib/hooks/vt_torch.c), counted like the calls above. */
#define VT_PUBLIC_HOOKS(X) X(vramtrace_block_alloc) X(vramtrace_block_free) X(torch_trace_alloc) X(torch_trace_free)

#define VT_ENUM_ITEM(n) VT_FN_##n,
enum vt_fn {
    VT_DRIVER_WRAPPED(VT_ENUM_ITEM)
    VT_FN_DRIVER_WRAPPED_END,
    VT_FN_HELPERS_BEGIN = VT_FN_DRIVER_WRAPPED_END - 1,
    VT_DRIVER_HELPERS(VT_ENUM_ITEM)
    VT_FN_DRIVER_END,
    VT_FN_RUNTIME_BEGIN = VT_FN_DRIVER_END - 1,
    VT_RUNTIME_WRAPPED(VT_ENUM_ITEM)
    VT_FN_RUNTIME_END,
    VT_FN_HOOKS_BEGIN = VT_FN_RUNTIME_END - 1,
    VT_PUBLIC_HOOKS(VT_ENUM_ITEM)
    VT_FN_COUNT
};
#undef VT_ENUM_ITEM

/* Whether the items of entry points a and b in an array of items of size bytes aligned to a cache line
 * share a line (see the lists above). */
#define VT_FN_SAME_LINE(a, b, size) ((VT_FN_##a) * (size) / 64 == (VT_FN_##b) * (size) / 64)
#define VT_FN_PAIRS_SAME_LINE(size)                                                              \
    (VT_FN_SAME_LINE(cuMemAllocAsync, cuMemFreeAsync, size) &&                                  \
     VT_FN_SAME_LINE(cudaMallocAsync, cudaFreeAsync, size) &&                                   \
     VT_FN_SAME_LINE(cudaMallocAsync_ptsz, cudaFreeAsync_ptsz, size))

#define VT_FN_IS_RUNTIME(f) ((f) > VT_FN_RUNTIME_BEGIN && (f) < VT_FN_RUNTIME_END)

/* The exact name of an entry point, as exported. */
const char *vt_fn_name(enum vt_fn f);

/* Variants that cuda.h only declares under per-thread-stream or internal macros. */
CUresult cuMemAllocAsync_ptsz(CUdeviceptr *dptr, size_t bytesize, CUstream hStream);
CUresult cuMemAllocFromPoolAsync_ptsz(CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool,
                                      CUstream hStream);
CUresult cuMemFreeAsync_ptsz(CUdeviceptr dptr, CUstream hStream);
CUresult cuGraphLaunch_ptsz(CUgraphExec hGraphExec, CUstream hStream);
CUresult cuStreamBeginCapture_v2_ptsz(CUstream hStream, CUstreamCaptureMode mode);
CUresult cuStreamBeginCaptureToGraph_ptsz(CUstream hStream, CUgraph hGraph, const CUgraphNode *dependencies,
                                          const CUgraphEdgeData *dependencyData, size_t numDependencies,
                                          CUstreamCaptureMode mode);
CUresult cuStreamEndCapture_ptsz(CUstream hStream, CUgraph *phGraph);
CUresult cuGraphInstantiateWithParams_ptsz(CUgraphExec *phGraphExec, CUgraph hGraph,
                                           CUDA_GRAPH_INSTANTIATE_PARAMS *instantiateParams);
/* The generic node call of CUDA 12.2, before edge data (cuda.h declares only cuGraphAddNode_v2). */
CUresult cuGraphAddNode(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies,
                        size_t numDependencies, CUgraphNodeParams *nodeParams);
/* Context creation of older versions (cuda.h names only the newest, cuCtxCreate_v4). */
CUresult cuCtxCreate_v2(CUcontext *pctx, unsigned int flags, CUdevice dev);
CUresult cuCtxCreate_v3(CUcontext *pctx, CUexecAffinityParam *params, int n, unsigned int flags, CUdevice dev);
CUresult cuCtxCreate_v4(CUcontext *pctx, CUctxCreateParams *params, unsigned int flags, CUdevice dev);

#endif
