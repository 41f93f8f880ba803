/* vt_fns.h: each entry point's name, for the real-function look-ups (lib/hooks/vt_real.c) and the dump's
 * records. */
#include "vt_fns.h"

static const char *const vt_names[VT_FN_COUNT] = {
#define VT_NAME_ITEM(n) [VT_FN_##n] = #n,
    VT_DRIVER_WRAPPED(VT_NAME_ITEM) VT_DRIVER_HELPERS(VT_NAME_ITEM) VT_RUNTIME_WRAPPED(VT_NAME_ITEM)
    VT_PUBLIC_HOOKS(VT_NAME_ITEM)
#undef VT_NAME_ITEM
};

const char *vt_fn_name(enum vt_fn f)
{
    return (f >= 0 && f < VT_FN_COUNT && vt_names[f]) ? vt_names[f] : "?";
}
