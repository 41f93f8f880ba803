/* Which stripe (vt_stripe.h) a thread uses: given in turn, so that threads spread evenly. */
#include "vt_stripe.h"

__thread unsigned vt_stripe_me __attribute__((tls_model("initial-exec")));
static unsigned vt_stripe_next;

unsigned vt_stripe_pick(void)
{
    unsigned i = __atomic_fetch_add(&vt_stripe_next, 1, __ATOMIC_RELAXED) % VT_STRIPES;
    vt_stripe_me = i + 1;
    return i;
}
