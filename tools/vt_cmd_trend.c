/* vramtrace trend DUMP...: three or more dumps of one process, taken in order of time whatever order
 * they are given in; the call sites whose live bytes grew overall and never shrank (a leak need not grow
 * in every interval: requests come in bursts), with how many intervals they grew in and their rate per
 * minute, and one verdict line. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vt_cmd.h"
#include "vt_verb.h"
#include "vt_json.h"
#include "vt_paths.h"
#include "vt_load.h"
#include "vt_model.h"
#include "vt_site_out.h"
#include "vt_trend.h"
#include "vt_units.h"

/* Each site that grew and never shrank as a folded stack with its bytes at the first and the last dump:
 * a differential flame graph of what kept growing. */
static void vt_trend_folded(const struct vt_trend *t)
{
    for (size_t i = 0; i < t->ns && t->se[i].grows; i++) {
        vt_site_folded(stdout, t->se[i].site);
        printf(" %llu %llu\n", (unsigned long long)t->se[i].bytes[0], (unsigned long long)t->se[i].bytes[t->n - 1]);
    }
}

static void vt_trend_text(const struct vt_trend *t, int full)
{
    const struct vt_dumpmodel *dm = t->dm;
    int n = t->n;
    char a[32];
    printf("trend of process %ld over %d dumps, %.1f s\n", dm[0].m.result.pid, n,
           (double)(dm[n - 1].m.result.uptime_ns - dm[0].m.result.uptime_ns) / 1e9);
    /* The series' peak: the last dump's, and the dump that first saw it. */
    const struct vt_model *last = &dm[n - 1].m;
    for (int k = 0; k < last->ndev; k++) {
        const struct vt_dev *v = &last->dev[last->devidx[k]];
        if (v->device < 0 || !v->peak)
            continue;
        int first = vt_trend_peak_since(t, v->device);
        vt_human(v->peak, a, sizeof a);
        printf("device %d: peak %s reserved, ", v->device, a);
        if (first == 0)
            printf("reached by the first dump\n");
        else
            printf("reached between dumps %d and %d\n", first, first + 1);
    }
    size_t shown = 0;
    for (size_t i = 0; i < t->ns && t->se[i].grows; i++) {
        const struct vt_series *x = &t->se[i];
        if (!shown++)
            printf("\nsites that grew and never shrank:\n");
        vt_human_delta((int64_t)x->rate, a, sizeof a);
        printf("%12s/min  %-9s %s (%s):", a, vt_site_class(x->site), x->site->kind, x->site->api);
        for (int k = 0; k < n; k++) {
            vt_human(x->bytes[k], a, sizeof a);
            printf("%s %s", k ? " ->" : "", a);
        }
        printf(" (grew in %d of %d intervals)\n", x->grew, n - 1);
        vt_site_print_frames(x->site, "               ", 8, full);
    }
    if (!shown)
        printf("\nno site grew without shrinking\n");
    printf("verdict: %s", t->verdict);
    const struct vt_series *lead = t->lead;
    if (t->by_segments) {
        vt_human_delta((int64_t)(t->alloc_last - t->alloc_first), a, sizeof a);
        printf(": allocated %s, growing in every interval, with no allocated site to show for it (the allocator "
               "does not list its blocks)", a);
        if (lead) {
            vt_human_delta((int64_t)lead->rate, a, sizeof a);
            printf("; its segments grew most at %s (%s/min)", lead->site->nframes ? vt_site_name(lead->site) : "an unknown site", a);
        }
    } else if (t->leak) {
        vt_human_delta((int64_t)lead->rate, a, sizeof a);
        printf(": %s/min at %s", a, lead->site->nframes ? vt_site_name(lead->site) : "an unknown site");
    } else if (!strcmp(t->verdict, "cache-growth")) {
        printf(": reserved grew, no allocation site grew without shrinking: cache, not a leak");
    }
    putchar('\n');
}

struct vt_trend_args {
    int json, folded, full;
};

static int vt_trend_word(void *args, int argc, char **argv, int *i)
{
    (void)args;
    (void)argc;
    if (argv[*i][0] != '-')
        return VT_WORD_OPERAND; /* a dump */
    return vt_usage_error("trend", "unexpected argument '%s'", argv[*i]);
}

static int vt_trend_run(void *args, char **paths, int n)
{
    const struct vt_trend_args *a = args;
    int json = a->json, folded = a->folded, full = a->full;
    if (n < 3)
        return vt_usage_error("trend", "needs at least three dumps of one process, %d given", n);
    if (json && folded)
        return vt_usage_error("trend", "--json and --folded: one or the other");
    struct vt_dumpmodel *dm = calloc((size_t)n, sizeof *dm);
    if (!dm)
        return 1;
    for (int i = 0; i < n; i++)
        dm[i].path = paths[i];
    /* A series is many dumps: each keeps its model, not its entries. */
    int rc = vt_load_models(dm, n, full ? VT_MODEL_FULL_STACKS : 0, 1), loaded = rc ? 0 : n;
    for (int i = 1; i < loaded && !rc; i++)
        if (dm[i].d.pid != dm[0].d.pid || dm[i].d.start_mono != dm[0].d.start_mono) {
            /* Two runs' dumps in one folder (a glob of every dump): the glob of one process's names it. */
            const char *slash = strrchr(paths[0], '/');
            char glob[4200];
            if (vt_dump_glob(glob, sizeof glob, paths[0], slash ? (int)(slash - paths[0]) : 0, dm[0].d.pid) < 0)
                snprintf(glob, sizeof glob, "...");
            fprintf(stderr, "vramtrace: %s is a dump of process %ld, %s of process %ld: trend needs dumps of one process "
                            "(one process's: vramtrace trend %s)\n",
                    paths[i], dm[i].d.pid, paths[0], dm[0].d.pid, glob);
            rc = VT_EXIT_USAGE;
            break;
        }
    if (rc)
        goto out;
    for (int i = 1; i < n; i++)
        if (dm[i].d.time_mono < dm[i - 1].d.time_mono) {
            fprintf(stderr, "vramtrace trend: the dumps were not given in the order they were taken: taken in that "
                            "order\n");
            break;
        }
    qsort(dm, (size_t)n, sizeof *dm, vt_by_time);
    for (int i = 0; i < n; i++)
        dm[i].m.d = &dm[i].d; /* the models point at their dumps, which moved */
    struct vt_trend t;
    if (vt_trend_compute(dm, n, &t) < 0) {
        fprintf(stderr, "vramtrace: out of memory\n");
        rc = 1;
        goto out;
    }
    if (json)
        vt_trend_json(stdout, &t);
    else if (folded)
        vt_trend_folded(&t);
    else
        vt_trend_text(&t, full);
    vt_trend_free(&t);
out:
    for (int i = 0; i < loaded; i++) {
        vt_model_free(&dm[i].m);
        vt_dumpfile_free(&dm[i].d);
    }
    free(dm);
    return rc;
}

#define VT_T(field) offsetof(struct vt_trend_args, field)
const struct vt_verb vt_verb_trend = {
    "trend", "trend DUMP DUMP DUMP... [OPTIONS]",
    "Three or more dumps of one process: the call sites that grew and never shrank, with their rate.", NULL,
    sizeof(struct vt_trend_args), NULL, vt_trend_word, vt_trend_run, 0, 0,
    {{"--json", NULL, "JSON (docs/JSON.md)", VT_OPT_FLAG, VT_T(json), 0, 0, 0, NULL, NULL, NULL},
     {"--folded", NULL, "the growing sites' folded stacks, bytes first and last", VT_OPT_FLAG, VT_T(folded), 0, 0, 0,
      NULL, NULL, NULL},
     {"--full-stacks", NULL, "every frame, none folded away", VT_OPT_FLAG, VT_T(full), 0, 0, 0, NULL, NULL, NULL}}};
