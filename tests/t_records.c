/* The dump's records defined once (common/vt_records.h): each record's synopsis, made from its field list,
 * is the one docs/FORMAT.md gives, word for word; and a record the writer prints from its list parses
 * back, field for field, by the numbers the reader takes from the same list. */
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "vt_dumpfile.h"
#include "vt_records.h"

int main(int argc, char **argv)
{
    (void)argc;
    char *self = strdup(argv[0]), path[4096];
    snprintf(path, sizeof path, "%s/../../docs/FORMAT.md", dirname(self));
    free(self);
    char *doc = read_text(path);
    if (!ok(doc != NULL, "docs/FORMAT.md read (%s)", path))
        return tap_done();
    static const struct {
        const char *name, *synopsis;
    } recs[] = {
#define VT_SYNOPSIS(rec) {#rec, VT_REC_DOC(rec)},
        VT_RECORDS(VT_SYNOPSIS)
#undef VT_SYNOPSIS
    };
    for (size_t i = 0; i < sizeof recs / sizeof recs[0]; i++) {
        char quoted[512];
        snprintf(quoted, sizeof quoted, "`%s`", recs[i].synopsis);
        ok(strstr(doc, quoted) != NULL, "%s: docs/FORMAT.md gives %s", recs[i].name, quoted);
    }
    free(doc);

    /* The writer's format of an allocation, filled field by field, read back by the reader's numbers. */
    char line[512];
    snprintf(line, sizeof line, VT_REC_FMT(ALLOC), 0x7f00ull, 4096ull, "device", "cuMemAlloc_v2", 1, 0x11ull, 0x22ull,
             0x33ull, 44ull, 5u, 66ull, 77ull, 88);
    char *w[VT_F_ALLOC_NF + 1] = {0};
    int n = 0;
    for (char *save = NULL, *t = strtok_r(line, " \n", &save); t && n <= VT_F_ALLOC_NF; t = strtok_r(NULL, " \n", &save))
        w[n++] = t;
    ok(n == VT_F_ALLOC_NF, "an alloc record has %d fields with its word (%d)", VT_F_ALLOC_NF, n);
    ok(n == VT_F_ALLOC_NF && !strcmp(w[0], VT_REC_ALLOC) && !strcmp(w[VT_F_ALLOC_ADDR], "0x7f00") &&
           !strcmp(w[VT_F_ALLOC_SIZE], "4096") && !strcmp(w[VT_F_ALLOC_KIND], "device") &&
           !strcmp(w[VT_F_ALLOC_API], "cuMemAlloc_v2") && !strcmp(w[VT_F_ALLOC_DEV], "1") &&
           !strcmp(w[VT_F_ALLOC_STREAM], "0x11") && !strcmp(w[VT_F_ALLOC_POOL], "0x22") &&
           !strcmp(w[VT_F_ALLOC_HANDLE], "0x33") && !strcmp(w[VT_F_ALLOC_OFFSET], "44") &&
           !strcmp(w[VT_F_ALLOC_STACK], "5") && !strcmp(w[VT_F_ALLOC_SEQ], "66") && !strcmp(w[VT_F_ALLOC_TIME], "77") &&
           !strcmp(w[VT_F_ALLOC_TID], "88"),
       "each alloc field is where the reader's number says");
    return tap_done();
}
