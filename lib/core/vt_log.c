/* stderr messages. Formatted into a stack buffer and written with one write(2), so lines from
 * several threads never interleave and no stdio lock of the program is taken; SIGPIPE is kept from
 * the program when stderr is a closed pipe (vt_sigguard.h). Held messages come from the constructor
 * (bad settings), before any other thread of ours exists. */
#include <errno.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "vt_log.h"
#include "vt_sigguard.h"
#include "vt_module.h"

static atomic_int vt_said[VT_ONCE_COUNT];
static atomic_int vt_released;
static char vt_held[4096];
static atomic_size_t vt_held_len;

static void vt_write_err(const char *buf, size_t len)
{
    struct vt_sigguard g;
    vt_sigguard_begin(&g);
    while (len) {
        ssize_t w = write(STDERR_FILENO, buf, len);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            break;
        buf += w;
        len -= (size_t)w;
    }
    vt_sigguard_end(&g);
}

static void vt_vsay(const char *fmt, va_list ap)
{
    int saved = errno;
    char buf[4352]; /* a line may name two paths: the closing line's diff command (vt_endnote.c) */
    int n = snprintf(buf, sizeof buf, "vramtrace: ");
    int m = vsnprintf(buf + n, sizeof buf - (size_t)n - 1, fmt, ap);
    if (m < 0)
        m = 0;
    size_t len = (size_t)n + ((size_t)m < sizeof buf - (size_t)n - 1 ? (size_t)m : sizeof buf - (size_t)n - 2);
    buf[len++] = '\n';
    if (atomic_load(&vt_released)) {
        vt_write_err(buf, len);
    } else {
        /* Held (the constructor: one thread); a message that does not fit whole is cut, never lost. */
        size_t at = atomic_load(&vt_held_len);
        if (at + 1 < sizeof vt_held) {
            if (at + len > sizeof vt_held) {
                len = sizeof vt_held - at;
                buf[len - 1] = '\n';
            }
            memcpy(vt_held + at, buf, len);
            atomic_store(&vt_held_len, at + len);
        }
    }
    errno = saved;
}

void vt_say(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vt_vsay(fmt, ap);
    va_end(ap);
}

void vt_say_once(enum vt_once key, const char *fmt, ...)
{
    if (atomic_exchange(&vt_said[key], 1))
        return;
    va_list ap;
    va_start(ap, fmt);
    vt_vsay(fmt, ap);
    va_end(ap);
}

void vt_log_release(void)
{
    if (atomic_exchange(&vt_released, 1))
        return;
    int saved = errno;
    size_t n = atomic_load(&vt_held_len);
    if (n > sizeof vt_held)
        n = sizeof vt_held;
    if (n)
        vt_write_err(vt_held, n);
    errno = saved;
}

VT_MODULE(log, .activate = vt_log_release);
