/* stderr messages. Formatted into a stack buffer and written with one write(2), so lines from
 * several threads never interleave and no stdio lock of the program is taken. */
#include <errno.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <unistd.h>

#include "vt_log.h"

static atomic_int vt_said[VT_ONCE_COUNT];

static void vt_vsay(const char *fmt, va_list ap)
{
    int saved = errno;
    char buf[512];
    int n = snprintf(buf, sizeof buf, "vramtrace: ");
    int m = vsnprintf(buf + n, sizeof buf - (size_t)n - 1, fmt, ap);
    if (m < 0)
        m = 0;
    size_t len = (size_t)n + ((size_t)m < sizeof buf - (size_t)n - 1 ? (size_t)m : sizeof buf - (size_t)n - 2);
    buf[len++] = '\n';
    ssize_t w = write(STDERR_FILENO, buf, len);
    (void)w;
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
