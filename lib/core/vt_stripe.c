/* Which stripe (vt_stripe.h) a thread uses: one of its own while one is free, else a shared one, given
 * in turn so that threads spread evenly. A pthread key gives a thread's own stripe back when it ends;
 * the mutex hands the stripe's last plain stores over to its next owner. */
#include <pthread.h>
#include <stdint.h>

#include "vt_stripe.h"
#include "vt_thread.h"
#include "vt_module.h"

struct vt_tally_line vt_tally_lines[VT_STRIPES];
__thread unsigned vt_stripe_me __attribute__((tls_model("initial-exec")));
__thread int vt_stripe_solo __attribute__((tls_model("initial-exec")));
static unsigned vt_stripe_next;
static pthread_mutex_t vt_solo_mu = PTHREAD_MUTEX_INITIALIZER;
static unsigned char vt_solo_taken[VT_STRIPES_SOLO];
static pthread_key_t vt_solo_key;
static int vt_solo_key_ok;
static pthread_once_t vt_solo_once = PTHREAD_ONCE_INIT;

static unsigned vt_shared_pick(void)
{
    unsigned i = VT_STRIPES_SOLO + __atomic_fetch_add(&vt_stripe_next, 1, __ATOMIC_RELAXED) % (VT_STRIPES - VT_STRIPES_SOLO);
    vt_stripe_solo = 0;
    vt_stripe_me = i + 1;
    return i;
}

/* The thread ends: its stripe goes back; anything it still counts (another key's destructor that
 * allocates) goes to a shared one. */
static void vt_solo_end(void *p)
{
    unsigned i = (unsigned)(uintptr_t)p - 1;
    vt_shared_pick();
    pthread_mutex_lock(&vt_solo_mu);
    vt_solo_taken[i] = 0;
    pthread_mutex_unlock(&vt_solo_mu);
}

static void vt_solo_make(void)
{
    vt_solo_key_ok = pthread_key_create(&vt_solo_key, vt_solo_end) == 0;
}

unsigned vt_stripe_pick(void)
{
    pthread_once(&vt_solo_once, vt_solo_make);
    int i = -1;
    if (vt_solo_key_ok) {
        pthread_mutex_lock(&vt_solo_mu);
        for (int k = 0; k < VT_STRIPES_SOLO && i < 0; k++)
            if (!vt_solo_taken[k])
                vt_solo_taken[k] = 1, i = k;
        pthread_mutex_unlock(&vt_solo_mu);
    }
    if (i >= 0 && pthread_setspecific(vt_solo_key, (void *)(uintptr_t)(i + 1)) != 0) {
        pthread_mutex_lock(&vt_solo_mu);
        vt_solo_taken[i] = 0;
        pthread_mutex_unlock(&vt_solo_mu);
        i = -1;
    }
    if (i < 0)
        return vt_shared_pick();
    vt_stripe_solo = 1;
    vt_stripe_me = (unsigned)i + 1;
    return (unsigned)i;
}

/* Fork: no pick under way in the child, and the stripes of threads that did not follow are free. */
static void vt_stripe_atfork_prepare(void)
{
    pthread_mutex_lock(&vt_solo_mu);
}

static void vt_stripe_atfork_parent(void)
{
    pthread_mutex_unlock(&vt_solo_mu);
}

static void vt_stripe_atfork_child(void)
{
    vt_mutex_reset(&vt_solo_mu);
    for (int k = 0; k < VT_STRIPES_SOLO; k++)
        vt_solo_taken[k] = vt_stripe_solo && vt_stripe_me == (unsigned)k + 1;
}

VT_MODULE(stripe, .prepare = vt_stripe_atfork_prepare, .parent = vt_stripe_atfork_parent, .child = vt_stripe_atfork_child);
