/* vt_hash.h's flag, one for both halves (the library and the command each link common/). */
#include "vt_hash.h"

__thread int vt_hash_oom __attribute__((tls_model("initial-exec")));
