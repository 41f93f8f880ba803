/* Every verb of the command, in the order its usage lists them. A verb is a file of its own
 * (tools/vt_cmd_NAME.c) that defines its row, vt_verb_NAME (vt_verb.h); adding one is that file and one
 * name here. "help" is the dispatcher's own (vramtrace.c) and has no row. */
#include <string.h>

#include "vt_verb.h"

#define VT_VERB_LIST(X) X(run) X(dump) X(report) X(diff) X(trend) X(html) X(metrics)

#define VT_VERB_DECL(name) extern const struct vt_verb vt_verb_##name;
VT_VERB_LIST(VT_VERB_DECL)
#undef VT_VERB_DECL

#define VT_VERB_REF(name) &vt_verb_##name,
const struct vt_verb *const vt_verbs[] = {VT_VERB_LIST(VT_VERB_REF)};
#undef VT_VERB_REF
const size_t vt_nverbs = sizeof vt_verbs / sizeof vt_verbs[0];

const struct vt_verb *vt_verb_named(const char *name)
{
    for (size_t i = 0; i < vt_nverbs; i++)
        if (!strcmp(vt_verbs[i]->name, name))
            return vt_verbs[i];
    return NULL;
}
