/* The read-mostly words every hook reads, kept together (vt_hot.h). */
#include "vt_hot.h"

struct vt_hotdata vt_hotdata = {.interp_direct = -1, .rt_direct = -1};
