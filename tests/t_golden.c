/* Golden outputs: report, diff and trend, in text and JSON, on fixed dumps the rig wrote and one the
 * H200 wrote (tests/data, module paths made unreachable so the names recorded in the dumps are used on
 * every machine). Any change of output shows here; after a deliberate one, run with
 * VRAMTRACE_GOLDEN_UPDATE=1 to rewrite the .out files and review the diff. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"

struct golden {
    const char *out;
    const char *args[6];
};

static const struct golden cases[] = {
    {"report-grow3.out", {"report", "grow.3.dump", NULL}},
    {"report-grow3.json", {"report", "grow.3.dump", "--json", NULL}},
    {"report-grow3.folded", {"report", "grow.3.dump", "--folded", NULL}},
    {"report-grow-exit.out", {"report", "grow.4.dump", NULL}},
    {"report-grow-exit.json", {"report", "grow.4.dump", "--json", NULL}},
    {"report-pool2.out", {"report", "pool.2.dump", "--top", "1", NULL}},
    {"report-pool2.json", {"report", "pool.2.dump", "--json", NULL}},
    {"diff-grow12.out", {"diff", "grow.1.dump", "grow.2.dump", NULL}},
    {"diff-grow12.json", {"diff", "grow.1.dump", "grow.2.dump", "--json", NULL}},
    {"diff-grow12.folded", {"diff", "grow.1.dump", "grow.2.dump", "--folded", NULL}},
    {"trend-grow.folded", {"trend", "grow.1.dump", "grow.2.dump", "grow.3.dump", "--folded", NULL}},
    {"diff-pool12.out", {"diff", "pool.1.dump", "pool.2.dump", NULL}},
    {"diff-pool12.json", {"diff", "pool.1.dump", "pool.2.dump", "--json", NULL}},
    {"trend-grow.out", {"trend", "grow.1.dump", "grow.2.dump", "grow.3.dump", NULL}},
    {"trend-grow.json", {"trend", "grow.1.dump", "grow.2.dump", "grow.3.dump", "--json", NULL}},
    /* Real ones (H200, torch 2.11, examples/torch_cache.py): the second dump's torch snapshot was seconds
     * old; two 64 MiB segments an operator made meanwhile are in our table and not in it (torch's
     * reserved, not allocated), and two temporaries it lists that torch's own total no longer counts are
     * not allocated either: device allocated 97.0 MiB, and the diff is cache growth. */
    {"report-h200-torch-race.out", {"report", "h200-torch-race.2.dump", NULL}},
    {"diff-h200-torch-race.out", {"diff", "h200-torch-race.1.dump", "h200-torch-race.2.dump", NULL}},
};

/* The output with the data directory's absolute path replaced by "tests/data". */
static char *normalize(const char *out, const char *datadir)
{
    size_t dl = strlen(datadir), n = 0;
    char *r = malloc(strlen(out) + 1);
    for (const char *p = out; r && *p;) {
        if (!strncmp(p, datadir, dl)) {
            memcpy(r + n, "tests/data", 10);
            n += 10;
            p += dl;
        } else {
            r[n++] = *p++;
        }
    }
    if (r)
        r[n] = 0;
    return r;
}

int main(void)
{
    char self[1024], datadir[PATH_MAX];
    ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
    self[len > 0 ? len : 0] = 0;
    *strrchr(self, '/') = 0;
    char rel[1100];
    snprintf(rel, sizeof rel, "%s/../../tests/data", self);
    if (!realpath(rel, datadir))
        return ok(0, "tests/data found"), tap_done();
    int update = getenv("VRAMTRACE_GOLDEN_UPDATE") != NULL;
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const char *args[7] = {NULL};
        char paths[6][PATH_MAX + 32];
        for (int i = 0; i < 6 && cases[c].args[i]; i++) {
            if (strstr(cases[c].args[i], ".dump")) {
                snprintf(paths[i], sizeof paths[i], "%s/%s", datadir, cases[c].args[i]);
                args[i] = paths[i];
            } else {
                args[i] = cases[c].args[i];
            }
        }
        struct run r;
        run_prog(&r, "../vramtrace", args, NULL, 0);
        char *got = normalize(r.out, datadir);
        char golden[PATH_MAX + 64];
        snprintf(golden, sizeof golden, "%s/%s", datadir, cases[c].out);
        if (update) {
            FILE *f = fopen(golden, "w");
            if (f) {
                fputs(got, f);
                fclose(f);
            }
        }
        char *want = read_text(golden);
        int same = want && got && !strcmp(want, got);
        ok(r.status == 0 && same, "%s", cases[c].out);
        if (!same && got)
            diag("output differs from %s (exit %d, stderr: %s); got:\n%s", golden, r.status, r.err, got);
        free(want);
        free(got);
        run_free(&r);
    }
    return tap_done();
}
