/* What every verb of the command shares: loading a dump with a one-line error, and usage errors. */
#include <stdarg.h>
#include <stdio.h>

#include "vt_cmd.h"
#include "vt_dumpfile.h"

int vt_load(const char *path, struct vt_dumpfile *d)
{
    char err[1024];
    if (vt_dumpfile_read(path, d, err, sizeof err) == 0)
        return 0;
    fprintf(stderr, "vramtrace: %s\n", err);
    return -1;
}

int vt_usage_error(const char *verb, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "vramtrace %s: ", verb);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputs(" (vramtrace --help for usage)\n", stderr);
    return VT_EXIT_USAGE;
}
