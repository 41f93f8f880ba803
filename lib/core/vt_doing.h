/* What the dumper is doing now, in words (static strings), so that a request that has to wait is told
 * why at once (lib/roof/vt_listen.c) instead of hearing nothing until its timeout. Set by whoever works
 * for a dump (the dumper, the bridges, the device queries); read from any thread. */
#ifndef VT_DOING_H
#define VT_DOING_H

/* what: a string that lives for good; NULL when idle. */
void vt_doing_set(const char *what);
/* The current activity (NULL when idle) and, in *since_ms, how long it has gone on. */
const char *vt_doing_get(unsigned long *since_ms);

#endif
