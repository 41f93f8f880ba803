/* vramtrace diff OLD NEW: what grew between two dumps. Call sites are matched by their frame strings,
 * so two runs of a program compare as well as two dumps of one process. Every growing site is classed
 * allocated (memory handed to the application grew: a leak suspect) or cache (a pool kept more free
 * memory), and one verdict line ends the report. With two dumps of each of several processes (a job's
 * ranks), each process is diffed on its own and the devices are added up, with a verdict per process.
 * --fail-on-growth SIZE exits 3 past SIZE of allocated growth, for CI gates and health checks, and says
 * why on stderr.
 *
 * Dumps are compared in the order they were taken, whatever order they are given in (said on stderr
 * when swapped). Two dumps of one process compare directly; two runs of one program (same executable
 * and command line) compare by call site; dumps of two different programs are refused unless --force,
 * since their difference says nothing about a leak. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vt_cmd.h"
#include "vt_json.h"
#include "vt_labels.h"
#include "vt_model.h"
#include "vt_site_out.h"
#include "vt_diff.h"
#include "vt_units.h"
#include "vt_verb.h"

#define VT_EXIT_GROWTH 3



static const struct vt_site *vt_any(const struct vt_change *c)
{
    return c->new ? c->new : c->old;
}

/* Allocated sites first (what a leak is made of), then segments and cache; each by growth. */
static int vt_change_cmp(const void *a, const void *b)
{
    const struct vt_change *x = a, *y = b;
    int rx = vt_any(x)->role != VT_ROLE_ALLOCATED, ry = vt_any(y)->role != VT_ROLE_ALLOCATED;
    if (rx != ry)
        return rx - ry;
    if (x->delta_bytes != y->delta_bytes)
        return x->delta_bytes < y->delta_bytes ? 1 : -1;
    return strcmp(vt_any(x)->key, vt_any(y)->key);
}

/* Growth that threads still running the statement that allocated it account for at the newer dump: a
 * request's temporaries caught in flight, not memory kept (vt_site.in_flight). */
static int vt_in_flight(const struct vt_change *c)
{
    return c->new && c->delta_count > 0 && c->delta_bytes > 0 &&
           (uint64_t)c->delta_count <= (uint64_t)c->new->in_flight + c->new->young;
}

/* A site that shrank by no more entries than threads were running its statement at the older dump: a
 * request's temporaries then, freed since. Their going is no sign that nothing leaks elsewhere: it is
 * not set against the growth (vt_diff.old_flight). */
static int vt_was_in_flight(const struct vt_change *c)
{
    return c->old && c->delta_count < 0 && c->delta_bytes < 0 &&
           (uint64_t)-c->delta_count <= (uint64_t)c->old->in_flight + c->old->young;
}

static const char *vt_status(const struct vt_change *c)
{
    return !c->old ? "new" : !c->new ? "vanished" : "changed";
}



/* What one pair's diff found, for the view of several processes. */
struct vt_diff_sum {
    long pid;
    int64_t allocated, reserved;
    const char *verdict;
    char top[512]; /* the leak suspect's site name, "" for none */
    struct vt_dev_delta dd[VT_MAX_DEV + 1];
    int ndd;
};



/* Growth that two dumps cannot tell from a leak: every entry of the site held by a thread alive at the
 * newer dump, none holding more there than one thread held at the older one (or one, and one more while
 * threads are inside the call): what a thread's last request may keep in its frames until its next (a
 * worker's locals, a result not yet replaced). A leak makes some thread hold more and more; only more
 * dumps (trend) can tell the rest apart. */
static int vt_thread_held(const struct vt_change *c)
{
    /* One more where a thread is inside the allocating call at the dump: the request in progress, while
     * its frames still hold the last one's. */
    uint32_t before = c->old ? c->old->max_per_thread : 0;
    uint32_t allowed = (before > 1 ? before : 1) + (c->new && c->new->in_flight ? 1 : 0);
    return c->new && c->new->by_live_threads && c->new->max_per_thread <= allowed;
}

void vt_diff_free(struct vt_diff *r)
{
    free(r->ch);
    vt_model_free(&r->m[0]);
    vt_model_free(&r->m[1]);
}

int vt_diff_compute(const char *const paths[2], const struct vt_dumpfile d[2], int full, struct vt_diff *r)
{
    memset(r, 0, sizeof *r);
    r->paths = paths;
    r->d = d;
    if (vt_model_build(&d[0], full ? VT_MODEL_FULL_STACKS : 0, &r->m[0]) < 0)
        return -1;
    if (vt_model_build(&d[1], full ? VT_MODEL_FULL_STACKS : 0, &r->m[1]) < 0) {
        vt_model_free(&r->m[0]);
        return -1;
    }
    struct vt_model *m = r->m;
    struct vt_model *both[2] = {&m[0], &m[1]};
    if (vt_labels_part_models(both, 2) < 0) { /* one name for one line in both (vt_labels.h) */
        vt_diff_free(r);
        return -1;
    }

    /* Devices: every ordinal either dump knows. */
    for (int side = 0; side < 2; side++) {
        for (int k = 0; k < m[side].ndev; k++) {
            int dv = m[side].dev[m[side].devidx[k]].device;
            int seen = 0;
            for (int j = 0; j < r->ndd; j++)
                seen |= r->dd[j].device == dv;
            if (seen)
                continue;
            const struct vt_dev *o = vt_model_dev(&m[0], dv), *n = vt_model_dev(&m[1], dv);
            struct vt_dev_delta *x = &r->dd[r->ndd++];
            x->device = dv;
            x->reserved = (int64_t)(n ? n->reserved : 0) - (int64_t)(o ? o->reserved : 0);
            x->allocated = (int64_t)(n ? n->allocated : 0) - (int64_t)(o ? o->allocated : 0);
            x->cached_unknown = (o && o->cached == VT_DF_UNKNOWN) || (n && n->cached == VT_DF_UNKNOWN);
            x->cached = x->cached_unknown ? 0 : (int64_t)(n ? n->cached : 0) - (int64_t)(o ? o->cached : 0);
            x->peak_old = o ? o->peak : 0;
            x->peak_new = n ? n->peak : 0;
            r->any_cached_unknown |= x->cached_unknown;
            r->alloc_total += x->allocated;
            r->res_total += x->reserved;
        }
    }

    /* Sites: every key of either dump whose bytes or count changed. */
    size_t cap = m[0].nsites + m[1].nsites;
    struct vt_change *ch = r->ch = calloc(cap ? cap : 1, sizeof *ch);
    if (!ch) {
        vt_diff_free(r);
        return -1;
    }
    for (size_t i = 0; i < m[1].nsites; i++) {
        const struct vt_site *n = &m[1].sites[i], *o = vt_model_find(&m[0], n->key);
        int64_t db = (int64_t)n->bytes - (int64_t)(o ? o->bytes : 0);
        int64_t dc = (int64_t)n->count - (int64_t)(o ? o->count : 0);
        if (n->role == VT_ROLE_CACHE && !db)
            continue; /* a pool's cache that did not change is no news, even where the other dump has no pools */
        if (db || dc || !o)
            ch[r->nc++] = (struct vt_change){o, n, db, dc};
    }
    for (size_t i = 0; i < m[0].nsites; i++) {
        const struct vt_site *o = &m[0].sites[i];
        if (!vt_model_find(&m[1], o->key) && !(o->role == VT_ROLE_CACHE && !o->bytes))
            ch[r->nc++] = (struct vt_change){o, NULL, -(int64_t)o->bytes, -(int64_t)o->count};
    }
    qsort(ch, r->nc, sizeof *ch, vt_change_cmp);

    /* The leak suspect: the allocated site that grew most, not in flight; one with a stack before blocks
     * the allocator recorded none for (torch's history off, or sampled: vt_history.c), whose growth is
     * said apart. Allocated memory that grew with no allocated site to show for it (an allocator that
     * reports its total but not its blocks, CuPy's pool before its hook) is still a suspect: named then
     * by the segments that grew most. */
    const struct vt_change *top = NULL, *seg_top = NULL;
    for (size_t i = 0; i < r->nc; i++) {
        if (vt_any(&ch[i])->role == VT_ROLE_ALLOCATED && vt_was_in_flight(&ch[i]))
            r->old_flight -= ch[i].delta_bytes;
        if (ch[i].delta_bytes <= 0)
            continue;
        if (vt_any(&ch[i])->role == VT_ROLE_ALLOCATED) {
            if (vt_in_flight(&ch[i])) {
                r->flight += ch[i].delta_bytes;
            } else if (vt_thread_held(&ch[i])) {
                r->undecided += ch[i].delta_bytes;
                if (!r->undecided_top)
                    r->undecided_top = &ch[i];
            } else if (!top || (vt_any(top)->unstacked && !vt_any(&ch[i])->unstacked))
                top = &ch[i];
        } else if (vt_any(&ch[i])->role == VT_ROLE_SEGMENT && !seg_top) {
            seg_top = &ch[i];
        }
    }
    for (size_t i = 0; top && !vt_any(top)->unstacked && i < r->nc; i++)
        if (ch[i].delta_bytes > 0 && vt_any(&ch[i])->role == VT_ROLE_ALLOCATED && vt_any(&ch[i])->unstacked &&
            !vt_in_flight(&ch[i]) && !vt_thread_held(&ch[i]))
            r->unstacked += ch[i].delta_bytes;
    r->by_segments = !top && seg_top;
    r->top = r->by_segments ? seg_top : top;
    /* Cache only where an allocator keeps one (its segments, a pool's free memory): in a process with none,
     * reserved memory that grew while allocated did not (past what is in flight) is the requests' own. */
    int cached = vt_model_keeps_cache(&m[0]) || vt_model_keeps_cache(&m[1]);
    int64_t grown = r->alloc_total + r->old_flight - r->flight;
    r->verdict = grown - r->undecided > 0                     ? "leak-suspect"
                 : grown > 0                                  ? "undecided"
                 : r->res_total > 0 && cached                 ? "cache-growth"
                 : r->res_total < 0 || r->alloc_total < 0     ? "shrink"
                                                              : "no-growth";
    if (d[0].pid == d[1].pid)
        r->self = vt_self_cost_between(&m[0].self, &m[1].self);
    return 0;
}

/* The leak suspect, when the verdict is one. */
static const struct vt_change *vt_diff_suspect(const struct vt_diff *r)
{
    return r->top && !strcmp(r->verdict, "leak-suspect") ? r->top : NULL;
}

/* A JSON object, without its newline. */
void vt_diff_json(FILE *f, const struct vt_diff *r)
{
    const struct vt_dumpfile *d = r->d;
    fprintf(f, "{\"old\":");
    vt_json_str(f, r->paths[0]);
    fprintf(f, ",\"new\":");
    vt_json_str(f, r->paths[1]);
    fprintf(f, ",\"old_pid\":%ld,\"new_pid\":%ld,\"interval_ns\":%lld,\"devices\":[", d[0].pid, d[1].pid,
           d[0].pid == d[1].pid ? (long long)(d[1].time_mono - d[0].time_mono) : 0LL);
    for (int j = 0; j < r->ndd; j++) {
        fprintf(f, "%s{\"device\":%d,\"reserved_delta\":%lld,\"allocated_delta\":%lld,\"cached_delta\":", j ? "," : "",
               r->dd[j].device, (long long)r->dd[j].reserved, (long long)r->dd[j].allocated);
        vt_json_i64(f, r->dd[j].cached, r->dd[j].cached_unknown);
        fprintf(f, ",\"peak_old\":%llu,\"peak_new\":%llu}", (unsigned long long)r->dd[j].peak_old,
                (unsigned long long)r->dd[j].peak_new);
    }
    fprintf(f, "],\"sites\":[");
    for (size_t i = 0; i < r->nc; i++) {
        const struct vt_change *c = &r->ch[i];
        const struct vt_site *s = vt_any(c);
        fprintf(f, "%s{", i ? "," : "");
        vt_site_json_head(f, s);
        fprintf(f, ",\"class\":\"%s\",\"status\":\"%s\",\"old_bytes\":%llu,\"new_bytes\":%llu,\"delta_bytes\":%lld,"
               "\"delta_count\":%lld,\"in_flight\":%s}",
               vt_site_class(s), vt_status(c), (unsigned long long)(c->old ? c->old->bytes : 0),
               (unsigned long long)(c->new ? c->new->bytes : 0), (long long)c->delta_bytes, (long long)c->delta_count,
               vt_in_flight(c) ? "true" : "false");
    }
    fprintf(f, "],\"allocated_delta\":%lld,\"reserved_delta\":%lld,\"in_flight_delta\":%lld,\"old_in_flight_freed\":%lld,"
           "\"undecided_delta\":%lld,\"verdict\":\"%s\",\"suspect\":",
           (long long)r->alloc_total, (long long)r->res_total, (long long)r->flight, (long long)r->old_flight,
           (long long)r->undecided, r->verdict);
    if (vt_diff_suspect(r))
        fprintf(f, "%td", vt_diff_suspect(r) - r->ch);
    else
        fputs("null", f);
    fputs(",\"self_cost\":", f);
    vt_self_cost_json(f, &r->self);
    fputc('}', f);
}

/* One line per changed site, outermost frame first, then its bytes in the older and the newer dump:
 * the input of differential flame graphs (flamegraph.pl reads two counts as before and after). */
static void vt_diff_folded(const struct vt_diff *r)
{
    for (size_t i = 0; i < r->nc; i++) {
        const struct vt_change *c = &r->ch[i];
        vt_site_folded(stdout, vt_any(c));
        printf(" %llu %llu\n", (unsigned long long)(c->old ? c->old->bytes : 0),
               (unsigned long long)(c->new ? c->new->bytes : 0));
    }
}

/* The verdict line's words after "verdict: V: reserved R, allocated A". */
static void vt_diff_verdict_detail(const struct vt_diff *r)
{
    char a[32], b[32];
    const struct vt_change *top = vt_diff_suspect(r);
    if (!r->top && !strcmp(r->verdict, "leak-suspect"))
        printf("; no call site grew: the allocators' own totals did (they do not list their blocks)");
    if (top) {
        char c[32];
        vt_human_delta(top->delta_bytes, c, sizeof c);
        if (r->by_segments)
            printf("; no allocated site is known (the allocator does not list its blocks), its segments grew "
                   "most at %s (%s, %+lld segs)",
                   vt_any(top)->nframes ? vt_site_name(vt_any(top)) : "an unknown site", c, (long long)top->delta_count);
        else
            printf("; most at %s (%s, %+lld blocks)", vt_any(top)->nframes ? vt_site_name(vt_any(top)) : "an unknown site",
                   c, (long long)top->delta_count);
        if (r->unstacked > 0 && !r->by_segments) {
            vt_human_delta(r->unstacked, c, sizeof c);
            printf("; %s more in blocks with no stack (%s)", c,
                   !strcmp(r->m[1].result.python.history, "sampled")
                       ? "torch's block history is on only part of the time, sampled: the site above is what it caught"
                       : "made while torch's block history was off");
        }
    }
    if (!strcmp(r->verdict, "cache-growth")) {
        printf("; memory handed to the program did not grow: this is cache, not a leak");
        /* What the caching allocators of the newer dump could give back, where they say. */
        uint64_t rel = 0, frag = 0;
        int known = 0;
        const struct vt_model *m1 = &r->m[1];
        for (int k = 0; k < m1->ndev; k++) {
            const struct vt_dev *v = &m1->dev[m1->devidx[k]];
            if (v->has_views && v->releasable != VT_DF_UNKNOWN && v->fragmented != VT_DF_UNKNOWN) {
                rel += v->releasable;
                frag += v->fragmented;
                known = 1;
            }
        }
        if (known) {
            vt_human(rel, a, sizeof a);
            vt_human(frag, b, sizeof b);
            /* Torch's word for it where torch is the only caching allocator; the plain one otherwise. */
            int torch_only = 1;
            for (size_t k = 0; k < m1->views.n; k++)
                torch_only &= !strcmp(m1->views.v[k].name, "torch");
            printf(torch_only ? "; empty_cache() would return %s, %s is free space inside partly used segments"
                              : "; the caching allocators hold %s in wholly free segments, %s of free space inside "
                                "partly used ones",
                   a, b);
        }
    }
    if (!strcmp(r->verdict, "undecided")) {
        const struct vt_site *s = vt_any(r->undecided_top);
        vt_human_delta(r->undecided, a, sizeof a);
        printf("; two dumps cannot tell: %s at %s is no more than the threads alive at the newer dump hold, "
               "at most %u each, as their last requests may; `vramtrace trend %s %s LATER.dump...` over later dumps "
               "of this process can",
               a, s->nframes ? vt_site_name(s) : "an unknown site", s->max_per_thread, r->paths[0], r->paths[1]);
    } else if (r->undecided > 0) {
        vt_human_delta(r->undecided, a, sizeof a);
        printf("; %s more held by live threads as their last requests may (not counted)", a);
    }
    if (r->flight > 0) {
        vt_human_delta(r->flight, a, sizeof a);
        printf("; %s allocated by statements still running at the newer dump (in flight), not counted", a);
    }
    if (r->old_flight > 0 && strcmp(r->verdict, "shrink") && strcmp(r->verdict, "no-growth")) {
        vt_human(r->old_flight, a, sizeof a);
        printf("; %s that statements running at the older dump held then (in flight) and freed since, not set "
               "against the growth",
               a);
    }
    if (r->any_cached_unknown && !strcmp(r->verdict, "leak-suspect"))
        printf(" (no caching allocator's view in these dumps: plain allocations count as allocated)");
}

static void vt_diff_text(const struct vt_diff *r, int full)
{
    const struct vt_dumpfile *d = r->d;
    char a[32], b[32];
    printf("diff %s -> %s\n", r->paths[0], r->paths[1]);
    if (d[0].pid == d[1].pid) {
        printf("process %ld, %.1f s apart\n", d[0].pid, (double)(d[1].time_mono - d[0].time_mono) / 1e9);
        vt_self_cost_text(&r->self, " in between");
    } else {
        printf("processes %ld and %ld: sites matched by their frames\n", d[0].pid, d[1].pid);
    }
    for (int j = 0; j < r->ndd; j++) {
        const struct vt_dev_delta *x = &r->dd[j];
        vt_human_delta(x->reserved, a, sizeof a);
        vt_human_delta(x->allocated, b, sizeof b);
        printf("%s %d: reserved %s, allocated %s, cached ", x->device >= 0 ? "device" : "no device", x->device, a, b);
        if (x->cached_unknown) {
            printf("unknown");
        } else {
            vt_human_delta(x->cached, a, sizeof a);
            printf("%s", a);
        }
        if (x->peak_new) {
            vt_human(x->peak_old, a, sizeof a);
            vt_human(x->peak_new, b, sizeof b);
            if (x->peak_new == x->peak_old)
                printf("; peak %s, as before", b);
            else
                printf("; peak %s -> %s", a, b);
        }
        printf("\n");
    }
    size_t grew = 0, shrank = 0;
    for (size_t i = 0; i < r->nc; i++) {
        const struct vt_change *c = &r->ch[i];
        if (c->delta_bytes <= 0) {
            shrank += c->delta_bytes < 0;
            continue;
        }
        if (!grew++)
            printf("\nsites that grew:\n");
        const struct vt_site *s = vt_any(c);
        vt_human_delta(c->delta_bytes, a, sizeof a);
        vt_human(c->new->bytes, b, sizeof b);
        char blocks[32] = "";
        if (s->role != VT_ROLE_CACHE)
            snprintf(blocks, sizeof blocks, "%+lld %s", (long long)c->delta_count,
                     s->role == VT_ROLE_SEGMENT ? "segs" : "blocks");
        printf("%12s %-11s %-9s %s (%s), now %s%s%s\n", a, blocks, vt_site_class(s), s->kind, s->api, b,
               c->old ? "" : "  [new]", vt_in_flight(c) ? "  [in flight]" : "");
        vt_site_print_frames(s, "               ", 8, full);
    }
    if (!grew)
        printf("\nno site grew\n");
    size_t vanished = 0;
    for (size_t i = 0; i < r->nc; i++) {
        if (r->ch[i].new)
            continue;
        const struct vt_site *s = r->ch[i].old;
        if (!vanished++)
            printf("\nsites that vanished:\n");
        vt_human_delta(r->ch[i].delta_bytes, a, sizeof a);
        printf("%12s %-9s %s (%s)  [vanished]  %s\n", a, vt_site_class(s), s->kind, s->api,
               s->nframes ? vt_site_name(s) : "");
    }
    if (shrank > vanished)
        printf("%zu other site%s shrank\n", shrank - vanished, shrank - vanished == 1 ? "" : "s");
    vt_human_delta(r->alloc_total, a, sizeof a);
    vt_human_delta(r->res_total, b, sizeof b);
    printf("verdict: %s: reserved %s, allocated %s", r->verdict, b, a);
    vt_diff_verdict_detail(r);
    putchar('\n');
}

enum vt_diff_format { VT_DIFF_TEXT, VT_DIFF_JSON, VT_DIFF_FOLDED };

/* Diffs the two loaded dumps d[0] (older) and d[1], printing it in the format given (JSON: an object
 * without its newline), and fills *sum; -1 when out of memory. */
static int vt_diff_pair(const char *const paths[2], struct vt_dumpfile d[2], enum vt_diff_format format, int full,
                        struct vt_diff_sum *sum)
{
    struct vt_diff r;
    if (vt_diff_compute(paths, d, full, &r) < 0)
        return -1;
    if (format == VT_DIFF_JSON)
        vt_diff_json(stdout, &r);
    else if (format == VT_DIFF_FOLDED)
        vt_diff_folded(&r);
    else
        vt_diff_text(&r, full);
    const struct vt_change *top = vt_diff_suspect(&r);
    sum->pid = d[1].pid;
    sum->allocated = r.alloc_total;
    sum->reserved = r.res_total;
    sum->verdict = r.verdict;
    sum->ndd = r.ndd;
    memcpy(sum->dd, r.dd, sizeof r.dd);
    snprintf(sum->top, sizeof sum->top, "%s", top && vt_any(top)->nframes ? vt_site_name(vt_any(top)) : "");
    vt_diff_free(&r);
    return 0;
}

static int vt_same_process(const struct vt_dumpfile *a, const struct vt_dumpfile *b)
{
    return a->pid == b->pid && a->start_mono == b->start_mono && a->start_wall == b->start_wall;
}

static int vt_same_text(const char *a, const char *b)
{
    return (!a && !b) || (a && b && !strcmp(a, b));
}

/* The worst verdict of several: a leak suspect anywhere, else cache growth, else shrink. */
static const char *vt_worst(const char *a, const char *b)
{
    static const char *const order[] = {"leak-suspect", "undecided", "cache-growth", "shrink", "no-growth"};
    for (size_t i = 0; i < sizeof order / sizeof order[0]; i++)
        if (!strcmp(a, order[i]) || !strcmp(b, order[i]))
            return order[i];
    return a;
}

/* Several processes, two dumps each: each diffed on its own, then the devices added up. */
static int vt_diff_processes(char **paths, struct vt_dumpfile *d, int n, int json, int full, int64_t *alloc)
{
    /* Pairs by pid, the older dump first. */
    int *pair = malloc((size_t)n * sizeof *pair);
    struct vt_diff_sum *sums = calloc((size_t)n / 2, sizeof *sums);
    int np = 0, status = 0;
    if (!pair || !sums) {
        fprintf(stderr, "vramtrace: out of memory\n");
        status = 1;
        goto out;
    }
    for (int i = 0; i < n; i++)
        pair[i] = -1;
    for (int i = 0; i < n; i++) {
        int same = 0, mate = -1;
        for (int j = 0; j < n; j++)
            if (j != i && d[j].pid == d[i].pid) {
                same++;
                mate = j;
            }
        if (same != 1) {
            status = vt_usage_error("diff", "with more than two dumps, diff wants two of each process: process %ld has %d",
                                    d[i].pid, same + 1);
            goto out;
        }
        if (!vt_same_process(&d[i], &d[mate])) {
            status = vt_usage_error("diff", "%s and %s both name process %ld, but of two processes (the pid was used "
                                    "again)", paths[i], paths[mate], d[i].pid);
            goto out;
        }
        pair[i] = mate;
    }
    if (json)
        printf("{\"processes\":[");
    else
        printf("diff of %d processes, two dumps each\n", n / 2);
    for (int i = 0; i < n; i++) {
        int j = pair[i];
        if (j < i)
            continue;
        int older = d[i].time_mono < d[j].time_mono || (d[i].time_mono == d[j].time_mono && d[i].seq <= d[j].seq);
        int a = older ? i : j, b = older ? j : i;
        struct vt_dumpfile two[2] = {d[a], d[b]};
        const char *const pp[2] = {paths[a], paths[b]};
        if (json && np)
            putchar(',');
        else if (!json)
            putchar('\n');
        if (vt_diff_pair(pp, two, json ? VT_DIFF_JSON : VT_DIFF_TEXT, full, &sums[np]) < 0) {
            fprintf(stderr, "vramtrace: out of memory\n");
            status = 1;
            goto out;
        }
        np++;
    }
    /* All processes, per device. */
    struct vt_dev_delta tot[VT_MAX_DEV + 1];
    int nt = 0;
    int64_t at = 0, rt = 0;
    const char *verdict = "no-growth";
    for (int k = 0; k < np; k++) {
        at += sums[k].allocated;
        rt += sums[k].reserved;
        verdict = vt_worst(verdict, sums[k].verdict);
        for (int j = 0; j < sums[k].ndd; j++) {
            const struct vt_dev_delta *x = &sums[k].dd[j];
            int t = 0;
            while (t < nt && tot[t].device != x->device)
                t++;
            if (t == nt)
                tot[nt++] = (struct vt_dev_delta){.device = x->device};
            tot[t].reserved += x->reserved;
            tot[t].allocated += x->allocated;
            tot[t].cached += x->cached;
            tot[t].cached_unknown |= x->cached_unknown;
        }
    }
    *alloc = at;
    char a[32], b[32];
    if (json) {
        printf("],\"devices\":[");
        for (int t = 0; t < nt; t++) {
            printf("%s{\"device\":%d,\"reserved_delta\":%lld,\"allocated_delta\":%lld,\"cached_delta\":", t ? "," : "",
                   tot[t].device, (long long)tot[t].reserved, (long long)tot[t].allocated);
            vt_json_i64(stdout, tot[t].cached, tot[t].cached_unknown);
            putchar('}');
        }
        printf("],\"allocated_delta\":%lld,\"reserved_delta\":%lld,\"verdict\":\"%s\"}\n", (long long)at, (long long)rt,
               verdict);
        goto out;
    }
    printf("\nall processes:\n");
    for (int t = 0; t < nt; t++) {
        vt_human_delta(tot[t].reserved, a, sizeof a);
        vt_human_delta(tot[t].allocated, b, sizeof b);
        printf("%s %d: reserved %s, allocated %s, cached ", tot[t].device >= 0 ? "device" : "no device", tot[t].device,
               a, b);
        if (tot[t].cached_unknown) {
            printf("unknown\n");
        } else {
            vt_human_delta(tot[t].cached, a, sizeof a);
            printf("%s\n", a);
        }
    }
    printf("verdict: %s:", verdict);
    for (int k = 0; k < np; k++) {
        printf("%s process %ld %s", k ? ";" : "", sums[k].pid, sums[k].verdict);
        if (sums[k].top[0])
            printf(" (most at %s)", sums[k].top);
    }
    putchar('\n');
out:
    free(pair);
    free(sums);
    return status;
}

#define VT_DIFF_MAX 512

/* Puts the older dump of a pair first (said when the user gave them the other way), and refuses two
 * different programs without --force. 0, or the exit status. */
static int vt_order_pair(char **paths, struct vt_dumpfile *d, int force)
{
    int same = vt_same_process(&d[0], &d[1]);
    if (!same && !force && !(vt_same_text(d[0].exe, d[1].exe) && vt_same_text(d[0].cmdline, d[1].cmdline))) {
        fprintf(stderr,
                "vramtrace diff: %s and %s are dumps of two different programs (process %ld: %s%s%s; process %ld: "
                "%s%s%s): growth between them says nothing about a leak. --force compares them by call site anyway\n",
                paths[0], paths[1], d[0].pid, d[0].exe ? d[0].exe : "-", d[0].cmdline ? ", " : "",
                d[0].cmdline ? d[0].cmdline : "", d[1].pid, d[1].exe ? d[1].exe : "-", d[1].cmdline ? ", " : "",
                d[1].cmdline ? d[1].cmdline : "");
        return VT_EXIT_USAGE;
    }
    /* One process: its monotonic clock; two: the wall clock. */
    int swap = same ? d[0].time_mono > d[1].time_mono : d[0].time_wall > d[1].time_wall;
    if (swap) {
        fprintf(stderr, "vramtrace diff: %s was taken after %s: compared in the order they were taken\n", paths[0],
                paths[1]);
        struct vt_dumpfile t = d[0];
        d[0] = d[1];
        d[1] = t;
        char *p = paths[0];
        paths[0] = paths[1];
        paths[1] = p;
    }
    return 0;
}

struct vt_diff_args {
    int json, folded, full, force;
    uint64_t limit; /* --fail-on-growth; UINT64_MAX: not given */
    int np;
};

static int vt_diff_word(void *args, int argc, char **argv, int *i)
{
    (void)argc;
    struct vt_diff_args *a = args;
    if (argv[*i][0] != '-' && a->np < VT_DIFF_MAX) {
        a->np++;
        return VT_WORD_OPERAND; /* a dump */
    }
    return vt_usage_error("diff", "unexpected argument '%s'", argv[*i]);
}

static int vt_diff_run(void *args, char **paths, int np)
{
    const struct vt_diff_args *a = args;
    int json = a->json, folded = a->folded, full = a->full, force = a->force, fail = a->limit != UINT64_MAX;
    uint64_t limit = a->limit;
    if (np < 2 || np % 2)
        return vt_usage_error("diff", "needs two dumps: OLD NEW (or two of each process)");
    if (json && folded)
        return vt_usage_error("diff", "--json and --folded: one or the other");
    if (folded && np != 2)
        return vt_usage_error("diff", "--folded takes two dumps: OLD NEW");
    struct vt_dumpfile *d = calloc((size_t)np, sizeof *d);
    if (!d) {
        fprintf(stderr, "vramtrace: out of memory\n");
        return 1;
    }
    int loaded = 0, status = 0;
    int64_t alloc = 0;
    for (; loaded < np; loaded++)
        if (vt_load(paths[loaded], &d[loaded]) < 0) {
            status = VT_EXIT_USAGE;
            break;
        }
    if (!status && np == 2)
        status = vt_order_pair(paths, d, force);
    if (!status && np == 2) {
        struct vt_diff_sum sum = {.allocated = 0};
        enum vt_diff_format format = json ? VT_DIFF_JSON : folded ? VT_DIFF_FOLDED : VT_DIFF_TEXT;
        if (vt_diff_pair((const char *const *)paths, d, format, full, &sum) < 0) {
            fprintf(stderr, "vramtrace: out of memory\n");
            status = 1;
        } else if (json) {
            putchar('\n');
        }
        alloc = sum.allocated;
    } else if (!status) {
        status = vt_diff_processes(paths, d, np, json, full, &alloc);
    }
    if (!status && fail && alloc > 0 && (uint64_t)alloc > limit) {
        char a[32], b[32];
        vt_human_delta(alloc, a, sizeof a);
        vt_human(limit, b, sizeof b);
        fprintf(stderr, "vramtrace diff: allocated memory grew by %s, more than --fail-on-growth %s: exit %d\n", a, b,
                VT_EXIT_GROWTH);
        status = VT_EXIT_GROWTH;
    }
    for (int i = 0; i < loaded; i++)
        vt_dumpfile_free(&d[i]);
    free(d);
    return status;
}

#define VT_D(field) offsetof(struct vt_diff_args, field)
static const struct vt_diff_args vt_diff_dflt = {.limit = UINT64_MAX};
const struct vt_verb vt_verb_diff = {
    "diff", "diff OLD NEW [OPTIONS]  |  diff OLD NEW OLD NEW... (two per process)",
    "What grew between two dumps, by call site, classed allocated (a leak suspect) or cache; one verdict.",
    "; 3 allocated memory grew by more than --fail-on-growth", sizeof(struct vt_diff_args), &vt_diff_dflt,
    vt_diff_word, vt_diff_run, 0, 0,
    {{"--json", NULL, "JSON (docs/JSON.md)", VT_OPT_FLAG, VT_D(json), 0, 0, 0, NULL, NULL, NULL},
     {"--folded", NULL, "each changed site's folded stack with its bytes before and after", VT_OPT_FLAG, VT_D(folded), 0,
      0, 0, NULL, NULL, NULL},
     {"--fail-on-growth", "SIZE", "exit 3 when allocated memory grew by more than SIZE (100M, 2G)", VT_OPT_SIZE,
      VT_D(limit), 0, 0, 0, "--fail-on-growth wants a size such as 100M or 2GiB, not '%s'", NULL, NULL},
     {"--full-stacks", NULL, "every frame, none folded away", VT_OPT_FLAG, VT_D(full), 0, 0, 0, NULL, NULL, NULL},
     {"--force", NULL, "compare dumps of two different programs", VT_OPT_FLAG, VT_D(force), 0, 0, 0, NULL, NULL, NULL}}};
