/* Real-function resolution. Driver entries come from the libcuda that the process loaded (found by
 * soname, since cudart opens it RTLD_LOCAL where RTLD_NEXT cannot see it); runtime entries come from
 * whichever libcudart is loaded. The pointer router maps every real driver pointer we wrap to our
 * wrapper for that exact variant, so cuGetProcAddress results can be swapped by value. */
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include "vt_hot.h"
#include "vt_real.h"

#undef cuGetProcAddress
CUresult cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags);

void *(*vt_real_dlsym)(void *, const char *);

static void *const vt_wrappers[VT_FN_DRIVER_WRAPPED_END] = {
#define VT_WRAP_ITEM(n) [VT_FN_##n] = (void *)&n,
    VT_DRIVER_WRAPPED(VT_WRAP_ITEM)
#undef VT_WRAP_ITEM
};

static _Atomic(void *) vt_slots[VT_FN_COUNT] __attribute__((aligned(64)));
_Static_assert(VT_FN_PAIRS_SAME_LINE(sizeof(void *)), "a stream-ordered allocation's real pointer and its free's share a line");
static atomic_int vt_driver_done;
static pthread_mutex_t vt_real_lock = PTHREAD_MUTEX_INITIALIZER;

void vt_real_dlsym_resolve(void)
{
    if (vt_real_dlsym)
        return;
    void *p = dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34");
    if (!p)
        p = dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.2.5");
    vt_real_dlsym = (void *(*)(void *, const char *))p;
}

static void *vt_lookup(void *handle, const char *name)
{
    vt_real_dlsym_resolve();
    return vt_real_dlsym ? vt_real_dlsym(handle, name) : NULL;
}

/* Driver: once a libcuda is loaded, take every entry from it. Retried until one is found, since a
 * process may load libcuda long after its first runtime call. */
static void vt_resolve_driver(void)
{
    if (atomic_load_explicit(&vt_driver_done, memory_order_acquire))
        return;
    pthread_mutex_lock(&vt_real_lock);
    if (!atomic_load(&vt_driver_done)) {
        void *h = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
        if (!h)
            h = dlopen("libcuda.so", RTLD_LAZY | RTLD_NOLOAD);
        if (h) {
            for (int f = 0; f < VT_FN_DRIVER_END; f++) {
                void *expected = NULL;
                void *p = vt_lookup(h, vt_fn_name(f));
                if (p)
                    atomic_compare_exchange_strong(&vt_slots[f], &expected, p);
            }
            atomic_store_explicit(&vt_driver_done, 1, memory_order_release);
        }
    }
    pthread_mutex_unlock(&vt_real_lock);
}

int vt_real_driver_is_fake(void)
{
    void *h = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
    if (!h)
        return 0;
    int fake = vt_lookup(h, "vramtrace_fake_driver") != NULL;
    dlclose(h);
    return fake;
}

struct vt_rt_search {
    const char *name;
    void *found;
};

static int vt_rt_visit(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    struct vt_rt_search *s = data;
    if (!info->dlpi_name || !strstr(info->dlpi_name, "libcudart"))
        return 0;
    void *h = dlopen(info->dlpi_name, RTLD_LAZY | RTLD_NOLOAD);
    if (!h)
        return 0;
    s->found = vt_lookup(h, s->name);
    dlclose(h);
    return s->found != NULL;
}

/* Runtime: the global scope first; then any loaded libcudart, since Python loads torch's privately. */
static void *vt_resolve_runtime(enum vt_fn f)
{
    void *p = vt_lookup(RTLD_NEXT, vt_fn_name(f));
    if (!p) {
        struct vt_rt_search s = {vt_fn_name(f), NULL};
        dl_iterate_phdr(vt_rt_visit, &s);
        p = s.found;
    }
    if (p) {
        void *expected = NULL;
        atomic_compare_exchange_strong(&vt_slots[f], &expected, p);
    }
    return atomic_load(&vt_slots[f]);
}

VT_HOT void *vt_real(enum vt_fn f)
{
    void *p = atomic_load_explicit(&vt_slots[f], memory_order_acquire);
    if (p)
        return p;
    if (VT_FN_IS_RUNTIME(f))
        return vt_resolve_runtime(f);
    vt_resolve_driver();
    return atomic_load_explicit(&vt_slots[f], memory_order_acquire);
}

int vt_real_driver_known(void)
{
    return atomic_load(&vt_driver_done) || atomic_load(&vt_slots[VT_FN_cuGetProcAddress_v2]) ||
           atomic_load(&vt_slots[VT_FN_cuMemAlloc_v2]);
}

void vt_real_offer(enum vt_fn f, void *real)
{
    void *expected = NULL;
    if (real && real != vt_wrappers[f])
        atomic_compare_exchange_strong(&vt_slots[f], &expected, real);
}

void *vt_route_pointer(void *p)
{
    if (!p)
        return NULL;
    vt_resolve_driver();
    for (int f = 0; f < VT_FN_DRIVER_WRAPPED_END; f++) {
        if (atomic_load_explicit(&vt_slots[f], memory_order_relaxed) == p || vt_wrappers[f] == p)
            return vt_wrappers[f];
    }
    return NULL;
}

void *vt_route_name(const char *name, enum vt_fn *fout)
{
    for (int f = 0; f < VT_FN_DRIVER_WRAPPED_END; f++) {
        if (strcmp(vt_fn_name(f), name) == 0) {
            *fout = (enum vt_fn)f;
            return vt_wrappers[f];
        }
    }
    return NULL;
}
