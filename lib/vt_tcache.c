/* Per-thread caches of interned items (vt_tcache.h). The pointer lives in initial-exec TLS, so finding
 * the cache costs a load; the memory is the heap's, so that the library's static TLS stays small. A
 * pthread key frees it when the thread ends, and marks the thread's pointer so that a hook running
 * later in the same thread's exit (another library's destructor that allocates) does not use it. */
#include <pthread.h>
#include <stdlib.h>

#include "vt_tcache.h"

struct vt_tcache {
    struct vt_tcache_slot slot[VT_TCACHE_TABLES][VT_TCACHE_SLOTS];
    struct vt_tcache_pair pair[VT_TCACHE_SLOTS];
    struct vt_pycode_memo memo[VT_TCACHE_SLOTS];
};

#define VT_TCACHE_GONE ((struct vt_tcache *)1)

static __thread struct vt_tcache *vt_mine __attribute__((tls_model("initial-exec")));
static pthread_key_t vt_key;
static int vt_key_ok;
static pthread_once_t vt_key_once = PTHREAD_ONCE_INIT;

static void vt_tcache_end(void *p)
{
    free(p);
    vt_mine = VT_TCACHE_GONE;
}

static void vt_key_make(void)
{
    vt_key_ok = pthread_key_create(&vt_key, vt_tcache_end) == 0;
}

static struct vt_tcache *vt_tcache_get(void)
{
    struct vt_tcache *c = vt_mine;
    if (c)
        return c == VT_TCACHE_GONE ? NULL : c;
    pthread_once(&vt_key_once, vt_key_make);
    if (!vt_key_ok || !(c = calloc(1, sizeof *c)))
        return NULL;
    if (pthread_setspecific(vt_key, c) != 0) {
        free(c);
        return NULL;
    }
    vt_mine = c;
    return c;
}

struct vt_tcache_slot *vt_tcache_slot(enum vt_tcache_table t, uint64_t h)
{
    struct vt_tcache *c = vt_tcache_get();
    return c ? &c->slot[t][h % VT_TCACHE_SLOTS] : NULL;
}

struct vt_tcache_pair *vt_tcache_pair(uint64_t h)
{
    struct vt_tcache *c = vt_tcache_get();
    return c ? &c->pair[h % VT_TCACHE_SLOTS] : NULL;
}

struct vt_pycode_memo *vt_tcache_memo(void)
{
    struct vt_tcache *c = vt_tcache_get();
    return c ? c->memo : NULL;
}
