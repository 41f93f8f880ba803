/* Finding the real CUDA functions behind our hooks, and routing driver pointers to our wrappers. */
#ifndef VT_REAL_H
#define VT_REAL_H

#include "vt_fns.h"

/* The real implementation of f, or NULL when no loaded library provides it. */
void *vt_real(enum vt_fn f);

/* Typed access: VT_REAL(cuMemAlloc_v2)(dptr, size). */
#define VT_REAL(n) ((__typeof__(n) *)vt_real(VT_FN_##n))

/* A wrapper's first line: `real` is the real n, and the wrapper returns err when there is none. */
#define VT_REAL_OR(n, err)                  \
    __typeof__(n) *real = VT_REAL(n);       \
    if (!real)                              \
        return err

/* True once a libcuda is known: the dumper may then ask the driver for device figures. */
int vt_real_driver_known(void);

/* True when the process's libcuda is the bundled fake driver (it exports vramtrace_fake_driver). For the
 * dumper: not inside a hook. */
int vt_real_driver_is_fake(void);

/* Offers a real pointer for f found by someone else's lookup (dlsym on a libcuda handle). */
void vt_real_offer(enum vt_fn f, void *real);

/* Our wrapper for the real driver pointer p, or NULL when p is not one we wrap. */
void *vt_route_pointer(void *p);

/* Our wrapper for the exact exported driver name, or NULL; sets *f. */
void *vt_route_name(const char *name, enum vt_fn *f);

/* glibc's own dlsym (ours replaces the exported one). */
extern void *(*vt_real_dlsym)(void *, const char *) __attribute__((visibility("hidden")));
void vt_real_dlsym_resolve(void) __attribute__((visibility("hidden")));

#endif
