// Test program in C++: an allocation made in a namespaced member function, so that the symbolizer's
// demangling can be checked.
#include <cuda.h>
#include <cstdio>

namespace vt_test {
struct Arena {
    __attribute__((noinline)) void grow(size_t n);
};

void Arena::grow(size_t n)
{
    CUdeviceptr p;
    if (cuMemAlloc(&p, n) != CUDA_SUCCESS)
        std::puts("alloc failed");
}
} // namespace vt_test

int main()
{
    CUcontext c;
    if (cuInit(0) || cuDevicePrimaryCtxRetain(&c, 0) || cuCtxSetCurrent(c))
        return 1;
    vt_test::Arena a;
    a.grow(3456789);
    std::puts("done");
    return 0;
}
