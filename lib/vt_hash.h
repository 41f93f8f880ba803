/* uthash, configured so that running out of memory inside the program never exits it: a failed
 * insert sets vt_hash_oom (callers hold the lock that owns the table) and the element is not added. */
#ifndef VT_HASH_H
#define VT_HASH_H

extern int vt_hash_oom;
#define HASH_NONFATAL_OOM 1
#define uthash_nonfatal_oom(elt) (vt_hash_oom = 1)
#include <uthash.h>

#endif
