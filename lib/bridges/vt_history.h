/* Torch's block history (Python stacks for the blocks its caching allocator hands out): when it is
 * switched on, and, once the first dump switched it on, the short windows it stays on for. */
#ifndef VT_HISTORY_H
#define VT_HISTORY_H

#include <stdatomic.h>
#include <stddef.h>

#include "vt_hot.h"

/* On the dumper thread: acts on a request or a window that ends or begins, and tells how long until
 * the next one is due (-1: none). */
void vt_history_work(void);
int vt_history_wait_ms(void);

/* A dump is being taken (not at exit): with VRAMTRACE_TORCH_HISTORY=dump the first one switches the
 * history on. */
void vt_history_dump_seen(void);
/* The dump's record: "STATE DETAIL" (docs/FORMAT.md, history), at most VT_HISTORY_TEXT bytes. */
#define VT_HISTORY_TEXT 160
void vt_history_text(char *out, size_t len);

#endif
