/* vt_signal.h. The handler only records the request (and a reply address, in a lock-free slot) and
 * wakes the dumper (vt_dumper.h: a semaphore post, async-signal-safe); then it calls the program's
 * own handler for a signal that did not come from vramtrace dump. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vt_config.h"
#include "vt_dumper.h"
#include "vt_log.h"
#include "vt_sigguard.h"
#include "vt_signal.h"

#define VT_REPLY_SLOTS 32

static struct sigaction vt_prev; /* the program's action before ours */
static atomic_int vt_prev_spent; /* a one-shot handler of the program was called */
static _Atomic uint64_t vt_replies[VT_REPLY_SLOTS];

static void vt_on_signal(int sig, siginfo_t *info, void *uctx)
{
    int saved = errno;
    int ours = 0;
    if (info && info->si_code == SI_QUEUE && info->si_pid > 0) {
        uint64_t v = (uint64_t)(uintptr_t)info->si_value.sival_ptr;
        if ((uint32_t)(v >> 32) == VT_REPLY_MAGIC) {
            ours = 1;
            uint64_t who = (uint64_t)(uint32_t)info->si_pid << 32 | (uint32_t)v;
            for (int i = 0; i < VT_REPLY_SLOTS; i++) {
                uint64_t empty = 0;
                if (atomic_compare_exchange_strong(&vt_replies[i], &empty, who))
                    break;
            }
        }
    }
    vt_dumper_wake_signal();
    errno = saved;
    if (ours)
        return;
    if (vt_prev.sa_flags & SA_RESETHAND && atomic_exchange(&vt_prev_spent, 1))
        return;
    if (vt_prev.sa_flags & SA_SIGINFO) {
        if (vt_prev.sa_sigaction)
            vt_prev.sa_sigaction(sig, info, uctx);
    } else if (vt_prev.sa_handler != SIG_DFL && vt_prev.sa_handler != SIG_IGN) {
        vt_prev.sa_handler(sig);
    }
}

void vt_signal_install(void)
{
    int sig = vt_cfg.signal;
    if (!sig)
        return;
    struct sigaction cur, sa;
    if (sigaction(sig, NULL, &cur) != 0) {
        vt_say_once(VT_ONCE_SIGNAL, "cannot read the handler of signal %d: %s; no dumps on signal", sig, strerror(errno));
        return;
    }
    if ((cur.sa_flags & SA_SIGINFO) && cur.sa_sigaction == vt_on_signal)
        return; /* a fork child: the parent's handler is ours */
    if (!(cur.sa_flags & SA_SIGINFO) && cur.sa_handler == SIG_IGN) {
        vt_say_once(VT_ONCE_SIGNAL, "the program ignores signal %d (%s): it stays ignored, so no dumps on "
                    "signal (VRAMTRACE_SIGNAL picks another)", sig, strsignal(sig));
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
}

int vt_signal_take_replies(uint64_t *out, int max)
{
    int n = 0;
    for (int i = 0; i < VT_REPLY_SLOTS && n < max; i++) {
        uint64_t v = atomic_exchange(&vt_replies[i], 0);
        if (v)
            out[n++] = v;
    }
    return n;
}

void vt_signal_reply(uint64_t who, int ok, const char *text)
{
    char path[64], line[4200];
    snprintf(path, sizeof path, "/proc/%u/fd/%u", (unsigned)(who >> 32), (unsigned)(who & 0xffffffffu));
    int fd = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (fd < 0)
        return; /* vramtrace dump then finds the dump by looking for it */
    struct stat st;
    int n = snprintf(line, sizeof line, "%ld %s %s\n", (long)getpid(), ok ? "ok" : "error", text);
    /* Only ever a pipe: never write into anything else that fd might be now. */
    if (fstat(fd, &st) == 0 && S_ISFIFO(st.st_mode) && n > 0 && (size_t)n < sizeof line) {
        struct vt_sigguard g;
        vt_sigguard_begin(&g);
        ssize_t w = write(fd, line, (size_t)n);
        (void)w;
        vt_sigguard_end(&g);
    }
    close(fd);
}
