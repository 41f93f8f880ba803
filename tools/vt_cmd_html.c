/* vramtrace html -o FILE DUMP...: one self-contained HTML page (vt_html.c) for a dump, a series of dumps
 * of one process, or dumps of several processes side by side. Dumps are grouped by process (its pid and
 * start), each group taken in the order its dumps were taken; a group of two has its diff, of three or
 * more its trend, as the verbs of those names would say. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vt_cmd.h"
#include "vt_verb.h"
#include "vt_html.h"
#include "vt_load.h"

#define VT_HTML_MAX 4096

static int vt_same_process(const struct vt_dumpfile *a, const struct vt_dumpfile *b)
{
    return a->pid == b->pid && a->start_mono == b->start_mono && a->start_wall == b->start_wall;
}

/* Groups together: all dumps of the first dump's process, then of the next, in the order first met. */
static int vt_by_process_then_time(struct vt_dumpmodel *dm, int n, int *starts)
{
    int groups = 0;
    for (int i = 0; i < n; groups++) {
        starts[groups] = i;
        int j = i + 1;
        for (int k = i + 1; k < n; k++) {
            if (vt_same_process(&dm[k].d, &dm[i].d)) {
                struct vt_dumpmodel t = dm[k];
                memmove(&dm[j + 1], &dm[j], (size_t)(k - j) * sizeof *dm);
                dm[j++] = t;
            }
        }
        qsort(&dm[i], (size_t)(j - i), sizeof *dm, vt_by_time);
        i = j;
    }
    starts[groups] = n;
    return groups;
}

struct vt_html_args {
    const char *out;
};

static int vt_html_word(void *args, int argc, char **argv, int *i)
{
    (void)args;
    (void)argc;
    if (argv[*i][0] != '-')
        return VT_WORD_OPERAND; /* a dump */
    return vt_usage_error("html", "unexpected argument '%s' (usage: vramtrace html -o FILE DUMP...)", argv[*i]);
}

static int vt_html_run(void *args, char **paths, int n)
{
    const char *out = ((const struct vt_html_args *)args)->out;
    if (!out || !n || n > VT_HTML_MAX)
        return vt_usage_error("html", !out ? "no -o FILE given" : !n ? "no dump given" : "more than %d dumps", VT_HTML_MAX);
    struct vt_dumpmodel *dm = calloc((size_t)n, sizeof *dm);
    int *starts = calloc((size_t)n + 1, sizeof *starts);
    struct vt_html_proc *procs = calloc((size_t)n, sizeof *procs);
    struct vt_trend *trends = calloc((size_t)n, sizeof *trends);
    struct vt_diff *diffs = calloc((size_t)n, sizeof *diffs);
    struct vt_dumpfile(*pairs)[2] = calloc((size_t)n, sizeof *pairs); /* a diff reads its two dumps side by side */
    const char *(*names)[2] = calloc((size_t)n, sizeof *names);      /* and keeps their names */
    int rc = 0, loaded = 0, groups = 0, computed = 0;
    if (!dm || !starts || !procs || !trends || !diffs || !pairs || !names) {
        fprintf(stderr, "vramtrace: out of memory\n");
        rc = 1;
        goto out;
    }
    for (int i = 0; i < n; i++)
        dm[i].path = paths[i];
    /* Every dump whole: a diff builds its models from the dumps themselves. */
    rc = vt_load_models(dm, n, 0, 0);
    loaded = rc ? 0 : n;
    if (rc)
        goto out;
    groups = vt_by_process_then_time(dm, n, starts);
    for (int i = 0; i < n; i++)
        dm[i].m.d = &dm[i].d; /* the models point at their dumps, which moved */
    for (int g = 0; g < groups; g++) {
        procs[g].dm = &dm[starts[g]];
        procs[g].n = starts[g + 1] - starts[g];
        computed = g;
        if (procs[g].n == 2) {
            names[g][0] = procs[g].dm[0].path;
            names[g][1] = procs[g].dm[1].path;
            pairs[g][0] = procs[g].dm[0].d;
            pairs[g][1] = procs[g].dm[1].d;
            if (vt_diff_compute(names[g], pairs[g], 0, &diffs[g]) < 0) {
                fprintf(stderr, "vramtrace: out of memory\n");
                rc = 1;
                goto out;
            }
            procs[g].diff = &diffs[g];
        } else if (procs[g].n > 2) {
            if (vt_trend_compute(procs[g].dm, procs[g].n, &trends[g]) < 0) {
                fprintf(stderr, "vramtrace: out of memory\n");
                rc = 1;
                goto out;
            }
            procs[g].trend = &trends[g];
        }
        computed = g + 1;
    }
    FILE *f = fopen(out, "w");
    if (!f) {
        fprintf(stderr, "vramtrace html: cannot write %s: %m\n", out);
        rc = 1;
        goto out;
    }
    int wrote = vt_html_write(f, procs, groups) == 0;
    if (fclose(f) != 0 || !wrote) {
        fprintf(stderr, "vramtrace html: cannot write %s%s\n", out, wrote ? "" : ": out of memory");
        unlink(out); /* no half page left behind */
        rc = 1;
    }
out:
    for (int g = 0; g < computed; g++) {
        if (procs[g].trend)
            vt_trend_free(&trends[g]);
        if (procs[g].diff)
            vt_diff_free(&diffs[g]);
    }
    free(names);
    free(pairs);
    free(diffs);
    for (int i = 0; i < loaded; i++) {
        vt_model_free(&dm[i].m);
        vt_dumpfile_free(&dm[i].d);
    }
    free(trends);
    free(procs);
    free(starts);
    free(dm);
    return rc;
}

const struct vt_verb vt_verb_html = {
    "html", "html -o FILE DUMP...",
    "One self-contained HTML page: per process the verdict, a timeline, device bars, a flame graph and the\n"
    "top sites; several processes side by side.",
    NULL, sizeof(struct vt_html_args), NULL, vt_html_word, vt_html_run, 0, 0,
    {{"-o", "FILE", "the page to write", VT_OPT_TEXT, offsetof(struct vt_html_args, out), 0, 0, 0, NULL, NULL, NULL}}};
