/* The dump writer's output: formatted into a buffer and written with write(2), never through stdio
 * (whose locks a thread interrupted by exit() may hold), with the first error kept. */
#ifndef VT_OUT_H
#define VT_OUT_H

#include <stddef.h>
#include <stdint.h>

struct vt_out {
    int fd;
    char *buf;
    size_t len, cap;
    int err;        /* errno of the first failed write, 0 while all is well */
    uint64_t bytes; /* written so far */
};

/* 0, or -1 when no buffer could be had. */
int vt_out_open(struct vt_out *o, int fd);
void vt_outf(struct vt_out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void vt_outs(struct vt_out *o, const char *s);
/* s as a dump's text field, escaped (common/vt_text.h; word: a space too), "-" for NULL or "". */
void vt_out_text(struct vt_out *o, const char *s, int word);
/* Flushes and frees the buffer (the fd stays open); 0, or -1 with errno set to the first error. */
int vt_out_finish(struct vt_out *o);

#endif
