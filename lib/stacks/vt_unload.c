/* vt_unload.h. The ranges are kept in a ring of VT_UNLOAD_RANGES, under a mutex (a dlclose is rare, and
 * the dumper asks outside every hook). Once the ring has wrapped, a stack older than the oldest range
 * kept cannot be checked: its addresses are taken as they are, as before this existed. */
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include "vt_thread.h"
#include "vt_unload.h"
#include "vt_module.h"

#define VT_UNLOAD_RANGES 1024

static struct {
    uintptr_t lo, hi;
    uint32_t gen; /* the generation this unload started */
} vt_ranges[VT_UNLOAD_RANGES];
static atomic_uint vt_gen;
static pthread_mutex_t vt_unload_mu = PTHREAD_MUTEX_INITIALIZER;

uint32_t vt_unload_gen(void)
{
    return atomic_load_explicit(&vt_gen, memory_order_acquire);
}

void vt_unload_note(uintptr_t lo, uintptr_t hi)
{
    pthread_mutex_lock(&vt_unload_mu);
    uint32_t g = atomic_load(&vt_gen) + 1;
    vt_ranges[g % VT_UNLOAD_RANGES].lo = lo;
    vt_ranges[g % VT_UNLOAD_RANGES].hi = hi;
    vt_ranges[g % VT_UNLOAD_RANGES].gen = g;
    atomic_store_explicit(&vt_gen, g, memory_order_release);
    pthread_mutex_unlock(&vt_unload_mu);
}

int vt_unload_stale(uintptr_t pc, uint32_t gen)
{
    uint32_t now = vt_unload_gen();
    if (gen >= now)
        return 0;
    int stale = 0;
    pthread_mutex_lock(&vt_unload_mu);
    for (uint32_t g = gen + 1; g <= now && !stale; g++) {
        if (now - g >= VT_UNLOAD_RANGES)
            continue; /* overwritten */
        const __typeof__(vt_ranges[0]) *r = &vt_ranges[g % VT_UNLOAD_RANGES];
        stale = r->gen == g && pc > r->lo && pc <= r->hi; /* a return address: the call is the byte before */
    }
    pthread_mutex_unlock(&vt_unload_mu);
    return stale;
}

static void vt_unload_atfork_child(void)
{
    vt_mutex_reset(&vt_unload_mu);
}

VT_MODULE(unload, .child = vt_unload_atfork_child);
