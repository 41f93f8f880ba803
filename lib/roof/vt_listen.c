/* vt_listen.h. The thread blocks in poll() on the listening socket, waking every VT_LISTEN_CHECK_MS to
 * see whether the program took the dump signal over (vt_signal_check), so that the user hears it soon,
 * not at the next dump. A request is read with a short timeout: a peer that connects and says nothing
 * holds the listener for at most that long. Requests wait in a few lock-free slots for the dumper;
 * when they are full the asker is told to come back, never left waiting. */
#include <errno.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "vt_ctl.h"
#include "vt_doing.h"
#include "vt_post.h"
#include "vt_fd.h"
#include "vt_listen.h"
#include "vt_log.h"
#include "vt_signal.h"
#include "vt_text.h"
#include "vt_thread.h"
#include "vt_module.h"

#define VT_LISTEN_SLOTS 16
#define VT_LISTEN_CHECK_MS 2000
#define VT_LISTEN_READ_MS 1000

static int vt_lfd = -1;
static atomic_int vt_listening;
/* A waiting request: its fd + 1, and 1 << 30 when it is a peek; 0 for an empty slot. */
static atomic_int vt_slots[VT_LISTEN_SLOTS];

static void vt_refuse(int c, const char *why)
{
    char line[256];
    snprintf(line, sizeof line, VT_CTL_ERROR " %s\n", why);
    vt_ctl_send(c, line, -1);
    close(c);
}

static void vt_accept_one(void)
{
    int c = accept4(vt_lfd, NULL, NULL, SOCK_CLOEXEC);
    if (c < 0) {
        if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
            struct timespec nap = {0, 100000000}; /* no descriptor to spare: never spin */
            nanosleep(&nap, NULL);
        }
        return;
    }
    if ((c = vt_fd_high(c)) < 0)
        return;
    struct ucred cr;
    socklen_t cl = sizeof cr;
    if (getsockopt(c, SOL_SOCKET, SO_PEERCRED, &cr, &cl) != 0 || (cr.uid != geteuid() && cr.uid != 0)) {
        close(c); /* only this process's user and root may ask */
        return;
    }
    char line[64];
    int junk;
    if (vt_ctl_recv(c, line, sizeof line, &junk, VT_LISTEN_READ_MS) < 0) {
        close(c);
        return;
    }
    if (junk >= 0)
        close(junk);
    int peek = !strcmp(line, VT_CTL_PEEK);
    if (!peek && strcmp(line, VT_CTL_DUMP)) {
        vt_refuse(c, "unknown request");
        return;
    }
    /* A dumper at work answers later: say now what it is doing, so the asker can tell slow from stuck. */
    unsigned long ms;
    const char *doing = vt_doing_get(&ms);
    if (doing) {
        char busy[512];
        snprintf(busy, sizeof busy, VT_CTL_BUSY " %s, for %lu ms\n", doing, ms);
        vt_ctl_send(c, busy, -1);
    }
    for (int i = 0; i < VT_LISTEN_SLOTS; i++) {
        int empty = 0;
        if (atomic_compare_exchange_strong(&vt_slots[i], &empty, (c + 1) | (peek << 30))) {
            vt_post(VT_POST_REQUEST);
            return;
        }
    }
    vt_refuse(c, "too many requests are waiting: ask again in a moment");
}

static void *vt_listen_main(void *arg)
{
    (void)arg;
    for (;;) {
        struct pollfd p = {.fd = vt_lfd, .events = POLLIN};
        int r = poll(&p, 1, VT_LISTEN_CHECK_MS);
        vt_signal_check();
        if (r > 0)
            vt_accept_one();
    }
    return NULL;
}

void vt_listen_start(void)
{
    if (atomic_exchange(&vt_listening, 1))
        return;
    unsigned long long nonce = 0;
    if (getrandom(&nonce, sizeof nonce, GRND_NONBLOCK) != (ssize_t)sizeof nonce)
        nonce = (unsigned long long)time(NULL) * 2654435761u ^ (unsigned long long)getpid() << 32;
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    /* Abstract: sun_path starts with a NUL, and the name is the bytes after it (no terminator). */
    if (vt_ctl_name(a.sun_path + 1, sizeof a.sun_path - 1, (long)getpid(), nonce) < 0)
        return;
    socklen_t alen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + strlen(a.sun_path + 1));
    int s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    const char *what = "socket";
    if (s >= 0 && (s = vt_fd_high(s)) < 0)
        what = "a descriptor for it (ulimit -n)";
    else if (s >= 0 && bind(s, (struct sockaddr *)&a, alen) != 0)
        what = "bind";
    else if (s >= 0 && listen(s, 8) != 0)
        what = "listen";
    else if (s >= 0) {
        vt_lfd = s;
        int err = vt_thread_start(vt_listen_main, NULL, "vramtrace-ctl");
        if (!err)
            return;
        errno = err;
        what = "its thread";
        vt_lfd = -1;
    }
    int err = errno;
    if (s >= 0)
        close(s);
    vt_say_once(VT_ONCE_LISTEN, "no dump socket (%s: %s): vramtrace dump cannot ask this process; the dump signal "
                "still works", what, strerror(err));
}

int vt_listen_take(struct vt_listen_req *out, int max)
{
    int n = 0;
    for (int i = 0; i < VT_LISTEN_SLOTS && n < max; i++) {
        int v = atomic_exchange(&vt_slots[i], 0);
        if (v)
            out[n++] = (struct vt_listen_req){(v & ((1 << 30) - 1)) - 1, v >> 30};
    }
    return n;
}

void vt_listen_answer(struct vt_listen_req *r, const char *path, int dump_fd, const char *why)
{
    char line[VT_CTL_LINE];
    if (dump_fd >= 0) {
        int k = snprintf(line, sizeof line, VT_CTL_OK " ");
        if (path)
            vt_text_escape(line + k, sizeof line - (size_t)k - 1, path, strlen(path), 0);
        else
            snprintf(line + k, sizeof line - (size_t)k, "-");
        strcat(line, "\n");
    } else {
        snprintf(line, sizeof line, VT_CTL_ERROR " %.4000s\n", why && *why ? why : "no dump");
    }
    vt_ctl_send(r->fd, line, dump_fd);
    close(r->fd);
    r->fd = -1;
}

static void vt_listen_atfork_child(void)
{
    /* The parent's socket and its waiting requests are the parent's: the child's copies are closed, and
     * it binds its own at its first CUDA call. */
    if (vt_lfd >= 0)
        close(vt_lfd);
    vt_lfd = -1;
    for (int i = 0; i < VT_LISTEN_SLOTS; i++) {
        int v = atomic_exchange(&vt_slots[i], 0);
        if (v)
            close((v & ((1 << 30) - 1)) - 1);
    }
    atomic_store(&vt_listening, 0);
}

VT_MODULE(listen, .child = vt_listen_atfork_child);
