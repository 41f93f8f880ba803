/* libFuzzer target: any bytes given to the dump reader, then to the model every verb builds, must give
 * either a dump or an error message, never a crash, a leak or undefined behaviour. `make fuzz` runs it. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "vt_dumpfile.h"
#include "vt_model.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    FILE *f = fmemopen((void *)data, size, "r");
    if (!f)
        return 0;
    struct vt_dumpfile d;
    char err[512];
    if (vt_dumpfile_parse(f, "fuzz.dump", &d, err, sizeof err) == 0) {
        struct vt_model m;
        if (vt_model_build(&d, VT_MODEL_NO_SYMBOLS, &m) == 0)
            vt_model_free(&m);
        vt_dumpfile_free(&d);
    } else if (strncmp(err, "fuzz.dump:", 10) != 0) {
        __builtin_trap(); /* every error names the file */
    }
    fclose(f);
    return 0;
}
