/* vt_out.h. Each flush reports progress to the dumper (vt_post_progress), which is how a thread
 * waiting for an exit dump tells a slow dump from a stuck one. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vt_post.h"
#include "vt_out.h"
#include "vt_text.h"

#define VT_OUT_CAP (1u << 20)

int vt_out_open(struct vt_out *o, int fd)
{
    memset(o, 0, sizeof *o);
    o->fd = fd;
    o->cap = VT_OUT_CAP;
    o->buf = malloc(o->cap);
    return o->buf ? 0 : -1;
}

static void vt_out_flush(struct vt_out *o)
{
    size_t done = 0;
    while (!o->err && done < o->len) {
        ssize_t w = write(o->fd, o->buf + done, o->len - done);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            o->err = w < 0 ? errno : EIO;
            break;
        }
        done += (size_t)w;
    }
    o->bytes += done;
    o->len = 0;
    vt_post_progress();
}

void vt_outf(struct vt_out *o, const char *fmt, ...)
{
    if (o->err)
        return;
    for (int pass = 0; pass < 2; pass++) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(o->buf + o->len, o->cap - o->len, fmt, ap);
        va_end(ap);
        if (n < 0) {
            o->err = EINVAL;
            return;
        }
        if ((size_t)n < o->cap - o->len) {
            o->len += (size_t)n;
            return;
        }
        vt_out_flush(o);
    }
    o->err = E2BIG; /* one record longer than the whole buffer: never written by vramtrace */
}

void vt_outs(struct vt_out *o, const char *s)
{
    size_t n = strlen(s);
    while (n && !o->err) {
        if (o->len == o->cap)
            vt_out_flush(o);
        size_t k = n < o->cap - o->len ? n : o->cap - o->len;
        memcpy(o->buf + o->len, s, k);
        o->len += k;
        s += k;
        n -= k;
    }
}

void vt_out_text(struct vt_out *o, const char *s, int word)
{
    if (!s || !*s) {
        vt_outs(o, "-");
        return;
    }
    /* Escaped in place in the buffer: at most four bytes for each byte of s. */
    size_t n = strlen(s);
    if (n > o->cap / 8)
        n = o->cap / 8; /* a name of more than 128 KiB is cut: no record grows past the buffer */
    if (o->cap - o->len < 4 * n + 1)
        vt_out_flush(o);
    if (o->err)
        return;
    o->len += vt_text_escape(o->buf + o->len, o->cap - o->len, s, n, word ? VT_TEXT_WORD : 0);
}

int vt_out_finish(struct vt_out *o)
{
    vt_out_flush(o);
    free(o->buf);
    o->buf = NULL;
    if (o->err) {
        errno = o->err;
        return -1;
    }
    return 0;
}
