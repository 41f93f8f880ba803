/* vt_sigguard.h: both signals are sent to the writing thread (the kernel's send_sig on current), so
 * blocking them on this thread is enough, and sigtimedwait with a zero timeout takes one back. */
#include <errno.h>
#include <pthread.h>
#include <time.h>

#include "vt_sigguard.h"

static void vt_guarded(sigset_t *s)
{
    sigemptyset(s);
    sigaddset(s, SIGPIPE);
    sigaddset(s, SIGXFSZ);
}

void vt_sigguard_begin(struct vt_sigguard *g)
{
    int saved = errno;
    sigset_t s;
    vt_guarded(&s);
    pthread_sigmask(SIG_BLOCK, &s, &g->old);
    sigpending(&g->pending_before);
    errno = saved;
}

void vt_sigguard_end(struct vt_sigguard *g)
{
    int saved = errno;
    sigset_t now;
    sigpending(&now);
    static const int sigs[] = {SIGPIPE, SIGXFSZ};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
        if (!sigismember(&now, sigs[i]) || sigismember(&g->pending_before, sigs[i]))
            continue;
        sigset_t one;
        sigemptyset(&one);
        sigaddset(&one, sigs[i]);
        struct timespec zero = {0, 0};
        while (sigtimedwait(&one, NULL, &zero) < 0 && errno == EINTR)
            ;
    }
    pthread_sigmask(SIG_SETMASK, &g->old, NULL);
    errno = saved;
}
