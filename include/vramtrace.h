/* vramtrace public API: what a program (or a caching allocator inside it) may call when
 * libvramtrace.so is loaded. Every function is optional to call; resolve them with
 * dlsym(RTLD_DEFAULT, ...) when the program must also run without the library. */
#ifndef VRAMTRACE_H
#define VRAMTRACE_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The release: the command says it (vramtrace --version), pkg-config's file carries it. */
#define VRAMTRACE_VERSION "0.6.0"
#define VRAMTRACE_FORMAT_VERSION 8

/* Writes a dump now, in the calling thread, with reason "api". On success returns 0 and, when
 * path is not NULL, copies the dump's path into path (at most len bytes, NUL-terminated).
 * Returns -1 when no dump could be written (the reason is said once on stderr). */
int vramtrace_dump(char *path, size_t len);

/* For native caching allocators: report each block handed to the program and each one taken back,
 * so that reports split the allocator's reserved memory (its cudaMalloc'd segments, seen anyway) into
 * allocated and cached. ptr is the block's device address, device its ordinal, allocator a short name
 * shown in reports (one word). Blocks get vramtrace's own call stacks. Cheap enough for every block
 * (one stack capture and a hash insert), safe from any thread, not from a signal handler.
 *
 * To run with and without the library, declare them weak and call them only when present:
 *     #pragma weak vramtrace_block_alloc
 *     #pragma weak vramtrace_block_free
 *     ...
 *     if (vramtrace_block_alloc) vramtrace_block_alloc(p, size, dev, "mypool");
 * (a preloaded libvramtrace.so then provides them), or look them up once with dlsym(RTLD_DEFAULT, ...). */
void vramtrace_block_alloc(const void *ptr, size_t size, int device, const char *allocator);
void vramtrace_block_free(const void *ptr);

/* For native caching allocators: declares the device allocation that starts at ptr (a cudaMalloc /
 * cuMemAlloc the pool made for itself) as one of allocator's segments, for as long as it lives, so that
 * reports count it as the pool's reserved memory (cached where no block is live), not as memory the
 * program holds. A segment whose first block the pool reports at its start address is marked so without
 * this call; declare the others (a pool that aligns or offsets its blocks, or reports none yet). Returns
 * 0, or -1 when vramtrace holds no device allocation starting at ptr. Weak, as the block hooks. */
int vramtrace_pool_segment(const void *ptr, const char *allocator);

#ifdef __cplusplus
}
#endif

#endif
