/* The trend of a series of dumps (vt_trend.h): which sites grew and never shrank, and the verdict.
 * A leak need not grow in every interval: requests come in bursts. */
#include <stdlib.h>
#include <string.h>

#include "vt_json.h"
#include "vt_site_out.h"
#include "vt_trend.h"

int vt_by_time(const void *a, const void *b)
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

void vt_trend_free(struct vt_trend *t)
{
    free(t->se);
    free(t->cells);
}

int vt_trend_compute(const struct vt_dumpmodel *dm, int n, struct vt_trend *t)
{
    memset(t, 0, sizeof *t);
    if (n < 1 || n > 1000000)
        return -1;
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
    /* Cache only where an allocator keeps one (its segments, a pool's free memory), as diff says it. */
    int kept = 0;
    for (int k = 0; k < n && !kept; k++)
        kept = vt_model_keeps_cache(&dm[k].m);
    t->verdict = t->leak                                     ? "leak-suspect"
                 : cache || (res_monotonic && n > 1 && kept) ? "cache-growth"
                 : res_last < res_first                  ? "shrink"
                                                         : "no-growth";
    return 0;
}

int vt_trend_peak_since(const struct vt_trend *t, int device)
{
    const struct vt_dev *v = vt_model_dev(&t->dm[t->n - 1].m, device);
    int first = t->n - 1;
    while (v && first > 0) {
        const struct vt_dev *o = vt_model_dev(&t->dm[first - 1].m, device);
        if (!o || o->peak != v->peak)
            break;
        first--;
    }
    return first;
}

void vt_trend_json(FILE *f, const struct vt_trend *t)
{
    const struct vt_dumpmodel *dm = t->dm;
    fprintf(f, "{\"pid\":%ld,\"dumps\":[", dm[0].m.result.pid);
    for (int k = 0; k < t->n; k++) {
        fputs(k ? "," : "", f);
        vt_json_str(f, dm[k].path);
    }
    fprintf(f, "],\"times_ns\":[");
    for (int k = 0; k < t->n; k++)
        fprintf(f, "%s%llu", k ? "," : "", (unsigned long long)dm[k].m.result.uptime_ns);
    /* Each device's peak in each dump (0 where a dump does not know the device). */
    fprintf(f, "],\"peaks\":[");
    const struct vt_model *last = &dm[t->n - 1].m;
    for (int j = 0, shown = 0; j < last->ndev; j++) {
        int dv = last->dev[last->devidx[j]].device;
        if (dv < 0)
            continue;
        fprintf(f, "%s{\"device\":%d,\"bytes\":[", shown++ ? "," : "", dv);
        for (int k = 0; k < t->n; k++) {
            const struct vt_dev *v = vt_model_dev(&dm[k].m, dv);
            fprintf(f, "%s%llu", k ? "," : "", (unsigned long long)(v ? v->peak : 0));
        }
        fputs("]}", f);
    }
    fprintf(f, "],\"sites\":[");
    for (size_t i = 0; i < t->ns; i++) {
        const struct vt_series *x = &t->se[i];
        fprintf(f, "%s{", i ? "," : "");
        vt_site_json_head(f, x->site);
        fprintf(f, ",\"class\":\"%s\",\"bytes\":[", vt_site_class(x->site));
        for (int k = 0; k < t->n; k++)
            fprintf(f, "%s%llu", k ? "," : "", (unsigned long long)x->bytes[k]);
        fprintf(f, "],\"monotonic\":%s,\"grows\":%s,\"grew_intervals\":%d,\"rate_bytes_per_min\":%.0f}",
               x->monotonic ? "true" : "false", x->grows ? "true" : "false", x->grew, x->rate);
    }
    fprintf(f, "],\"verdict\":\"%s\"}\n", t->verdict);
}
