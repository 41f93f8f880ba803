/* uthash, configured so that running out of memory inside the program never exits it: a failed
 * insert sets vt_hash_oom (thread-local: tables under different locks are filled at once) and the
 * element is not added. The library's tables use it, and so does the reader's model and metrics
 * renderer, which run inside the library too (its metrics file): a caller resets vt_hash_oom, fills
 * its tables, and fails as out of memory when it is set (common/vt_hash.c defines it). */
#ifndef VT_HASH_H
#define VT_HASH_H

extern __thread int vt_hash_oom __attribute__((tls_model("initial-exec")));
#define HASH_NONFATAL_OOM 1
#define uthash_nonfatal_oom(elt) (vt_hash_oom = 1)
#include <uthash.h>

#endif
