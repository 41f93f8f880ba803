/* vt_doing.h. Two words, each stored whole: a reader may pair a new activity with the old start, which
 * only makes the figure it shows a little off. */
#include <stdatomic.h>
#include <stdint.h>

#include "vt_clock.h"
#include "vt_doing.h"

static _Atomic(const char *) vt_what;
static _Atomic uint64_t vt_since;

void vt_doing_set(const char *what)
{
    atomic_store(&vt_since, vt_now_ns());
    atomic_store(&vt_what, what);
}

const char *vt_doing_get(unsigned long *since_ms)
{
    const char *w = atomic_load(&vt_what);
    uint64_t t = atomic_load(&vt_since), now = vt_now_ns();
    *since_ms = w && now > t ? (unsigned long)((now - t) / 1000000u) : 0;
    return w;
}
