/* uthash, configured so that running out of memory inside the program never exits it: a failed
 * insert sets vt_hash_oom (thread-local: tables under different locks are filled at once) and the
 * element is not added. */
#ifndef VT_HASH_H
#define VT_HASH_H

extern __thread int vt_hash_oom __attribute__((tls_model("initial-exec")));
#define HASH_NONFATAL_OOM 1
#define uthash_nonfatal_oom(elt) (vt_hash_oom = 1)
#include <uthash.h>

#endif
