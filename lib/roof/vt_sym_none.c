/* The library reads its own dumps for the metrics file (vt_metrics_file.c) with the reader's model, but
 * never symbolizes inside the program: it links no libdw, and the names its dumps carry (dladdr's, and
 * the Python frames') are what the metrics name sites by (the model's VT_MODEL_NO_SYMBOLS). So the
 * reader's symbolizer is, inside the library, one that opens nothing. */
#include <stddef.h>

#include "vt_symbols.h"

struct vt_symbolizer *vt_sym_open(const struct vt_dumpfile *d)
{
    (void)d;
    return NULL;
}

const char *vt_sym_frames(struct vt_symbolizer *s, uint64_t pc)
{
    (void)s;
    (void)pc;
    return NULL;
}

void vt_sym_close(struct vt_symbolizer *s)
{
    (void)s;
}
