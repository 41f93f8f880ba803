/* vramtrace trend DUMP...: three or more dumps of one process, taken in order of time whatever order
 * they are given in; the call sites whose live bytes grew overall and never shrank (a leak need not grow
 * in every interval: requests come in bursts), with how many intervals they grew in and their rate per
 * minute, and one verdict line. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vt_cmd.h"
#include "vt_json.h"
#include "vt_model.h"
#include "vt_units.h"

struct vt_series {
    const struct vt_site *site; /* the site as seen last */
    uint64_t *bytes;            /* one per dump, 0 where absent */
    int monotonic;              /* grew in every interval */
    int grows;                  /* grew overall and never shrank */
    int grew;                   /* intervals it grew in */
    double rate;                /* bytes per minute, first to last dump */
};

struct vt_dumpmodel {
    const char *path;
    struct vt_dumpfile d;
    struct vt_model m;
};

static int vt_by_time(const void *a, const void *b)
{
    const struct vt_dumpmodel *x = a, *y = b;
    return x->d.time_mono < y->d.time_mono ? -1 : x->d.time_mono > y->d.time_mono;
}

static int vt_by_rate(const void *a, const void *b)
{
    const struct vt_series *x = a, *y = b;
    if (x->grows != y->grows)
        return y->grows - x->grows;
    return x->rate < y->rate ? 1 : x->rate > y->rate ? -1 : strcmp(x->site->key, y->site->key);
}

/* What a trend over the dumps found: computed once (vt_trend_compute), printed by a renderer below. */
struct vt_trend {
    const struct vt_dumpmodel *dm; /* n dumps, in the order they were taken */
    int n;
    struct vt_series *se;          /* every site of any dump, the growing ones first (vt_by_rate) */
    size_t ns;
    uint64_t *cells;               /* the series' bytes */
    const struct vt_series *lead;  /* the leak suspect, or the segments that grew most (by_segments) */
    int leak, by_segments;
    uint64_t alloc_first, alloc_last;
    const char *verdict;
};

static void vt_trend_free(struct vt_trend *t)
{
    free(t->se);
    free(t->cells);
}

/* -1 when out of memory. */
static int vt_trend_compute(const struct vt_dumpmodel *dm, int n, struct vt_trend *t)
{
    memset(t, 0, sizeof *t);
    t->dm = dm;
    t->n = n;
    /* Every site of any dump, its bytes in each. */
    size_t cap = 0;
    for (int i = 0; i < n; i++)
        cap += dm[i].m.nsites;
    t->se = calloc(cap ? cap : 1, sizeof *t->se);
    t->cells = calloc((cap ? cap : 1) * (size_t)n, sizeof *t->cells);
    if (!t->se || !t->cells) {
        vt_trend_free(t);
        return -1;
    }
    for (int i = n - 1; i >= 0; i--) {
        for (size_t j = 0; j < dm[i].m.nsites; j++) {
            const struct vt_site *s = &dm[i].m.sites[j];
            int later = 0;
            for (int k = i + 1; k < n && !later; k++)
                later = vt_model_find(&dm[k].m, s->key) != NULL;
            if (later)
                continue; /* already a series, taken from a later dump */
            struct vt_series *x = &t->se[t->ns];
            x->site = s;
            x->bytes = t->cells + t->ns * (size_t)n;
            for (int k = 0; k < n; k++) {
                const struct vt_site *u = vt_model_find(&dm[k].m, s->key);
                x->bytes[k] = u ? u->bytes : 0;
            }
            int shrank = 0;
            for (int k = 1; k < n; k++) {
                x->grew += x->bytes[k] > x->bytes[k - 1];
                shrank |= x->bytes[k] < x->bytes[k - 1];
            }
            x->monotonic = x->grew == n - 1;
            x->grows = !shrank && x->bytes[n - 1] > x->bytes[0];
            double minutes = (double)(dm[n - 1].d.time_mono - dm[0].d.time_mono) / 60e9;
            x->rate = minutes > 0 ? ((double)x->bytes[n - 1] - (double)x->bytes[0]) / minutes : 0;
            t->ns++;
        }
    }
    qsort(t->se, t->ns, sizeof *t->se, vt_by_rate);

    /* The leak suspect: the fastest growing allocated site. Allocated memory that grew in every interval
     * with no allocated site to show for it (an allocator that reports its total, not its blocks) is
     * still a suspect, named by its fastest growing segments. */
    int cache = 0;
    const struct vt_series *seg_lead = NULL;
    for (size_t i = 0; i < t->ns; i++) {
        const struct vt_series *x = &t->se[i];
        if (!x->grows)
            continue;
        if (x->site->role == VT_ROLE_ALLOCATED) {
            t->leak = 1;
            t->lead = t->lead ? t->lead : x;
        } else if (x->site->role != VT_ROLE_IMPORTED) { /* another owner's memory is neither */
            cache = 1;
            if (x->site->role == VT_ROLE_SEGMENT && !seg_lead)
                seg_lead = x;
        }
    }
    int alloc_grows = n > 1;
    for (int k = 0; k < n; k++) {
        uint64_t al = 0;
        for (int j = 0; j < dm[k].m.ndev; j++)
            al += dm[k].m.dev[dm[k].m.devidx[j]].allocated;
        if (k && al < t->alloc_last)
            alloc_grows = 0;
        if (!k)
            t->alloc_first = al;
        t->alloc_last = al;
    }
    if (!t->leak && alloc_grows && t->alloc_last > t->alloc_first) {
        t->leak = t->by_segments = 1;
        t->lead = seg_lead;
    }
    uint64_t res_first = 0, res_last = 0;
    int res_monotonic = 1;
    for (int k = 0; k < n; k++) {
        uint64_t r = 0;
        for (int j = 0; j < dm[k].m.ndev; j++)
            r += dm[k].m.dev[dm[k].m.devidx[j]].reserved;
        if (k && r <= res_last)
            res_monotonic = 0;
        if (!k)
            res_first = r;
        res_last = r;
    }
    t->verdict = t->leak                                 ? "leak-suspect"
                 : cache || (res_monotonic && n > 1)     ? "cache-growth"
                 : res_last < res_first                  ? "shrink"
                                                         : "no-growth";
    return 0;
}

static void vt_trend_json(const struct vt_trend *t)
{
    const struct vt_dumpmodel *dm = t->dm;
    printf("{\"pid\":%ld,\"dumps\":[", dm[0].d.pid);
    for (int k = 0; k < t->n; k++) {
        printf("%s", k ? "," : "");
        vt_json_str(stdout, dm[k].path);
    }
    printf("],\"times_ns\":[");
    for (int k = 0; k < t->n; k++)
        printf("%s%llu", k ? "," : "", (unsigned long long)(dm[k].d.time_mono - dm[k].d.start_mono));
    printf("],\"sites\":[");
    for (size_t i = 0; i < t->ns; i++) {
        const struct vt_series *x = &t->se[i];
        printf("%s{", i ? "," : "");
        vt_site_json_head(stdout, x->site);
        printf(",\"class\":\"%s\",\"bytes\":[", vt_site_class(x->site));
        for (int k = 0; k < t->n; k++)
            printf("%s%llu", k ? "," : "", (unsigned long long)x->bytes[k]);
        printf("],\"monotonic\":%s,\"grows\":%s,\"grew_intervals\":%d,\"rate_bytes_per_min\":%.0f}",
               x->monotonic ? "true" : "false", x->grows ? "true" : "false", x->grew, x->rate);
    }
    printf("],\"verdict\":\"%s\"}\n", t->verdict);
}

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
    printf("trend of process %ld over %d dumps, %.1f s\n", dm[0].d.pid, n,
           (double)(dm[n - 1].d.time_mono - dm[0].d.time_mono) / 1e9);
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

int vt_cmd_trend(int argc, char **argv)
{
    int json = 0, folded = 0, full = 0, n = 0;
    const char **paths = calloc((size_t)argc, sizeof *paths);
    if (!paths)
        return 1;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--json"))
            json = 1;
        else if (!strcmp(argv[i], "--folded"))
            folded = 1;
        else if (!strcmp(argv[i], "--full-stacks"))
            full = 1;
        else if (argv[i][0] != '-')
            paths[n++] = argv[i];
        else
            return vt_usage_error("trend", "unexpected argument '%s'", argv[i]);
    }
    if (n < 3)
        return vt_usage_error("trend", "needs at least three dumps of one process, %d given", n);
    if (json && folded)
        return vt_usage_error("trend", "--json and --folded: one or the other");
    struct vt_dumpmodel *dm = calloc((size_t)n, sizeof *dm);
    if (!dm)
        return 1;
    int rc = 0, loaded = 0;
    for (; loaded < n; loaded++) {
        dm[loaded].path = paths[loaded];
        if (vt_load(paths[loaded], &dm[loaded].d) < 0) {
            rc = VT_EXIT_USAGE;
            break;
        }
        if (dm[loaded].d.pid != dm[0].d.pid || dm[loaded].d.start_mono != dm[0].d.start_mono) {
            fprintf(stderr, "vramtrace: %s is a dump of process %ld, %s of process %ld: trend needs dumps of one process\n",
                    paths[loaded], dm[loaded].d.pid, paths[0], dm[0].d.pid);
            vt_dumpfile_free(&dm[loaded].d);
            rc = VT_EXIT_USAGE;
            break;
        }
        if (vt_model_build(&dm[loaded].d, full ? VT_MODEL_FULL_STACKS : 0, &dm[loaded].m) < 0) {
            vt_dumpfile_free(&dm[loaded].d);
            fprintf(stderr, "vramtrace: out of memory\n");
            rc = 1;
            break;
        }
        /* A series is many dumps: each keeps its model, not its entries. */
        vt_model_shed(&dm[loaded].m);
        vt_dumpfile_shed(&dm[loaded].d);
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
    struct vt_trend t;
    if (vt_trend_compute(dm, n, &t) < 0) {
        fprintf(stderr, "vramtrace: out of memory\n");
        rc = 1;
        goto out;
    }
    if (json)
        vt_trend_json(&t);
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
    free(paths);
    return rc;
}
