/* Writes that can never raise a signal in the program: SIGPIPE (stderr a closed pipe) and SIGXFSZ (a
 * dump past `ulimit -f`) are blocked on the calling thread around the write, and one that the write
 * raised is taken back before they are unblocked, so the write just fails (EPIPE, EFBIG) and the
 * program never sees the signal. A signal of those two that was already pending is left alone. */
#ifndef VT_SIGGUARD_H
#define VT_SIGGUARD_H

#include <signal.h>

struct vt_sigguard {
    sigset_t old, pending_before;
};

void vt_sigguard_begin(struct vt_sigguard *g);
void vt_sigguard_end(struct vt_sigguard *g);

#endif
