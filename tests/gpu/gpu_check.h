// What the GPU suite's CUDA programs share: a runtime call that must succeed (else the program stops
// with the call and the error, which check.py reports as a scenario that did not run), and
// vramtrace_dump, weak so that a program also runs bare.
#ifndef GPU_CHECK_H
#define GPU_CHECK_H

#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>

extern "C" int vramtrace_dump(char *path, size_t len) __attribute__((weak));

#define CHECK(x)                                                             \
    do {                                                                     \
        cudaError_t e_ = (x);                                                \
        if (e_ != cudaSuccess) {                                             \
            fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e_));         \
            exit(1);                                                         \
        }                                                                    \
    } while (0)

#endif
