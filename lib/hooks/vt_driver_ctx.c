/* Driver hooks for context creation. A context is the first GPU memory a process holds (hundreds of
 * MiB in nvidia-smi before any allocation), so making one is what switches vramtrace on in a process
 * (lib/core/vt_module.h); the calls themselves pass straight through and are not recorded. */
#include "vt_module.h"
#include "vt_real.h"

#undef cuCtxCreate

CUresult cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev)
{
    VT_REAL_OR(cuDevicePrimaryCtxRetain, CUDA_ERROR_NOT_INITIALIZED);
    vt_activate();
    return real(pctx, dev);
}

CUresult cuCtxCreate_v2(CUcontext *pctx, unsigned int flags, CUdevice dev)
{
    VT_REAL_OR(cuCtxCreate_v2, CUDA_ERROR_NOT_INITIALIZED);
    vt_activate();
    return real(pctx, flags, dev);
}

CUresult cuCtxCreate_v3(CUcontext *pctx, CUexecAffinityParam *params, int n, unsigned int flags, CUdevice dev)
{
    VT_REAL_OR(cuCtxCreate_v3, CUDA_ERROR_NOT_INITIALIZED);
    vt_activate();
    return real(pctx, params, n, flags, dev);
}

CUresult cuCtxCreate_v4(CUcontext *pctx, CUctxCreateParams *params, unsigned int flags, CUdevice dev)
{
    VT_REAL_OR(cuCtxCreate_v4, CUDA_ERROR_NOT_INITIALIZED);
    vt_activate();
    return real(pctx, params, flags, dev);
}
