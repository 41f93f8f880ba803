/* vt_signal.h. The handler only posts to the dumper (lib/core/vt_post.h: a semaphore post, async-signal-safe),
 * then calls the program's own handler. */
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "vt_config.h"
#include "vt_post.h"
#include "vt_log.h"
#include "vt_signal.h"
#include "vt_module.h"

static struct sigaction vt_prev; /* the program's action before ours */
static atomic_int vt_prev_spent; /* a one-shot handler of the program was called */
static atomic_int vt_installed;

static void vt_on_signal(int sig, siginfo_t *info, void *uctx)
{
    int saved = errno;
    vt_post(VT_POST_SIGNAL);
    errno = saved;
    if (vt_prev.sa_flags & SA_RESETHAND) {
        if (atomic_exchange(&vt_prev_spent, 1))
            return;
        /* As the kernel would have done for the program: the next one takes the default action. */
        struct sigaction dfl;
        memset(&dfl, 0, sizeof dfl);
        dfl.sa_handler = SIG_DFL;
        sigaction(sig, &dfl, NULL);
        errno = saved;
    }
    if (vt_prev.sa_flags & SA_SIGINFO) {
        if (vt_prev.sa_sigaction)
            vt_prev.sa_sigaction(sig, info, uctx);
    } else if (vt_prev.sa_handler != SIG_DFL && vt_prev.sa_handler != SIG_IGN) {
        vt_prev.sa_handler(sig);
    }
}

/* Installs the handler for vt_cfg.signal (once per process image; a fork child keeps the parent's). */
static void vt_signal_install(void)
{
    int sig = vt_cfg.signal;
    if (!sig)
        return;
    struct sigaction cur, sa;
    if (sigaction(sig, NULL, &cur) != 0) {
        vt_say_once(VT_ONCE_SIGNAL, "cannot read the handler of signal %d: %s; no dumps on signal", sig, strerror(errno));
        return;
    }
    if ((cur.sa_flags & SA_SIGINFO) && cur.sa_sigaction == vt_on_signal) {
        atomic_store(&vt_installed, 1);
        return; /* a fork child: the parent's handler is ours */
    }
    if (!(cur.sa_flags & SA_SIGINFO) && cur.sa_handler == SIG_IGN) {
        vt_say_once(VT_ONCE_SIGNAL, "the program ignores signal %d (%s): it stays ignored, so no dumps on "
                    "signal (vramtrace dump PID still works; VRAMTRACE_SIGNAL picks another)", sig, strsignal(sig));
        return;
    }
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = vt_on_signal;
    int handler = (cur.sa_flags & SA_SIGINFO) || cur.sa_handler != SIG_DFL;
    if (handler) {
        /* Run as the program asked for its handler: its mask, restarting or not, on its stack. */
        sa.sa_mask = cur.sa_mask;
        sa.sa_flags = SA_SIGINFO | (cur.sa_flags & (SA_RESTART | SA_NODEFER | SA_ONSTACK));
    } else {
        sigemptyset(&sa.sa_mask);
        sa.sa_flags = SA_SIGINFO | SA_RESTART;
    }
    vt_prev = cur;
    atomic_store(&vt_prev_spent, 0);
    if (sigaction(sig, &sa, NULL) != 0)
        vt_say_once(VT_ONCE_SIGNAL, "cannot install the dump signal handler: %s", strerror(errno));
    else
        atomic_store(&vt_installed, 1);
}

void vt_signal_check(void)
{
    struct sigaction cur;
    int sig = vt_cfg.signal;
    if (!atomic_load(&vt_installed) || sigaction(sig, NULL, &cur) != 0)
        return;
    if ((cur.sa_flags & SA_SIGINFO) && cur.sa_sigaction == vt_on_signal)
        return;
    if (!(cur.sa_flags & SA_SIGINFO) && cur.sa_handler == SIG_DFL && atomic_load(&vt_prev_spent))
        return; /* the program's one-shot handler ran: the default action is back, as it asked */
    char num[16];
    const char *name = sigabbrev_np(sig); /* USR1; NULL for a real-time signal */
    if (!name) {
        snprintf(num, sizeof num, "%d", sig);
        name = num;
    }
    vt_say_once(VT_ONCE_SIGNAL_TAKEN, "the program took signal %s over after vramtrace installed its handler: "
                "kill -%s PID no longer writes a dump (vramtrace dump PID still does; VRAMTRACE_SIGNAL picks a "
                "signal the program leaves alone)", name, name);
}

VT_MODULE(signal, .activate = vt_signal_install);
