/* The dump signal: installed at the first CUDA call (a process that never uses CUDA keeps its signal
 * dispositions untouched), in a way that keeps the program's own semantics: an ignored signal stays
 * ignored (no dumps on signal, said once), a handler the program had is still called with its own
 * mask and flags (a one-shot SA_RESETHAND handler once). vramtrace dump's requests carry a reply
 * address (sigqueue): they are not passed on to the program's handler, and the dumper answers them
 * with the dump's path or why there is none (the protocol: common/vt_reply.h). */
#ifndef VT_SIGNAL_H
#define VT_SIGNAL_H

#include <stdint.h>

#include "vt_reply.h"

/* Installs the handler for vt_cfg.signal (once per process image; a fork child keeps the parent's). */
void vt_signal_install(void);

/* The reply addresses of requests that arrived so far (taken: each is answered once), as
 * (pid << 32 | fd); returns how many (at most max). */
int vt_signal_take_replies(uint64_t *out, int max);
/* Answers one request. */
void vt_signal_reply(uint64_t who, int ok, const char *text);

#endif
