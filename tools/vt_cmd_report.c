/* vramtrace report DUMP: where the memory is. The header, then per device the accounting (process used,
 * overhead, reserved, allocated, cached; an unknown figure is said to be unknown, never shown as 0), then
 * the call sites holding the most live bytes; an exit dump's sites are its leaks. The formats besides
 * text are rows (vt_report.h). Several dumps, one per process, go to vt_report_processes.c. */
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "vt_cmd.h"
#include "vt_format.h"
#include "vt_json.h"
#include "vt_model.h"
#include "vt_site_out.h"
#include "vt_metrics.h"
#include "vt_pprof.h"
#include "vt_report.h"
#include "vt_units.h"
#include "vt_verb.h"

#define VT_TEXT_FRAMES 12

static int vt_site_shown(const struct vt_report_opts *o, const struct vt_site *s)
{
    return s->role != VT_ROLE_CACHE && (o->device == -2 || s->device == o->device);
}

static double vt_us(uint64_t ns)
{
    return (double)ns / 1e3;
}

/* One caching allocator's memory on the device, as its view tells it (vt_views.c). */
static void vt_view_text(const struct vt_view *w)
{
    char a[32], b[32], c[32];
    vt_human(w->reserved == VT_DF_UNKNOWN ? 0 : w->reserved, a, sizeof a);
    vt_human(w->allocated, b, sizeof b);
    printf("  %-13s %s allocator: reserved %s", w->name, w->backend, w->reserved == VT_DF_UNKNOWN ? "unknown" : a);
    if (w->segments)
        printf(" in %llu segment%s", (unsigned long long)w->segments, w->segments == 1 ? "" : "s");
    printf(", allocated %s", b);
    if (w->blocks)
        printf(" in %llu block%s", (unsigned long long)w->blocks, w->blocks == 1 ? "" : "s");
    if (w->blocks_nostack)
        printf(" (%llu without a stack)", (unsigned long long)w->blocks_nostack);
    putchar('\n');
    if (w->reserved != VT_DF_UNKNOWN && w->reserved >= w->allocated) {
        vt_human(w->reserved - w->allocated, a, sizeof a);
        printf("  %-13s cached %s", "", a);
        if (w->releasable != VT_DF_UNKNOWN) {
            vt_human(w->releasable, b, sizeof b);
            printf(": releasable %s", b);
        }
        if (w->fragmented != VT_DF_UNKNOWN) {
            vt_human(w->fragmented, c, sizeof c);
            printf(", fragmented %s", c);
        }
        if (w->pending_free) {
            vt_human(w->pending_free, c, sizeof c);
            printf(", pending free %s", c);
        }
        putchar('\n');
    }
    if (w->own_allocated != VT_DF_UNKNOWN || w->own_reserved != VT_DF_UNKNOWN) {
        vt_human(w->own_allocated == VT_DF_UNKNOWN ? 0 : w->own_allocated, a, sizeof a);
        vt_human(w->own_reserved == VT_DF_UNKNOWN ? 0 : w->own_reserved, b, sizeof b);
        int same = w->own_allocated == w->allocated && w->own_reserved == w->reserved;
        printf("  %-13s its own totals: allocated %s, reserved %s%s\n", "", a, b,
               same ? " (the same)" : " (they differ: see the cross-check)");
    }
    if (w->segments && strcmp(w->backend, "cudaMallocAsync")) {
        printf("  %-13s cross-check: %llu of %llu segments are driver allocations vramtrace holds%s\n", "",
               (unsigned long long)w->matched, (unsigned long long)w->segments,
               w->unmatched ? "; the others are not counted in allocated" : "");
        if (w->orphans) {
            vt_human(w->orphan_bytes, c, sizeof c);
            printf("  %-13s %llu driver allocation%s by this allocator (%s) %s not in its snapshot: made or given "
                   "back while the dump was taken; counted as its reserved, use unknown\n", "",
                   (unsigned long long)w->orphans, w->orphans == 1 ? "" : "s", c, w->orphans == 1 ? "is" : "are");
        }
    }
}

/* The overhead's parts, under its line: what the context's limits let the driver set aside, and the rest. */
static void vt_overhead_text(const struct vt_dev *v)
{
    if (!v->has_limits || v->overhead == VT_DF_UNKNOWN)
        return;
    char a[32], b[32];
    printf("  %-13s as the context's limits allow:", "");
    if (v->local_memory != VT_DF_UNKNOWN) {
        vt_human(v->local_memory, a, sizeof a);
        vt_human(v->stack_per_thread, b, sizeof b);
        printf(" local memory %s (%s of stack x %llu resident threads),", a, b, (unsigned long long)v->resident_threads);
    }
    if (v->malloc_heap != VT_DF_UNKNOWN) {
        vt_human(v->malloc_heap, a, sizeof a);
        printf(" malloc heap %s,", a);
    }
    if (v->printf_fifo != VT_DF_UNKNOWN) {
        vt_human(v->printf_fifo, a, sizeof a);
        printf(" printf FIFO %s;", a);
    }
    if (v->internals != VT_DF_UNKNOWN) {
        vt_human(v->internals, a, sizeof a);
        printf(" the rest %s: context, loaded modules, page tables (driver internals)\n", a);
    } else {
        printf(" together more than the overhead: the driver sets them aside lazily, not all are taken\n");
    }
}

/* Python call sites: how many allocations got their Python frames, and why the others did not. */
static void vt_call_sites_text(const struct vt_result_interp *in)
{
    printf("  %-13s ", "call sites");
    if (!strcmp(in->capture, "off")) {
        printf("Python frames off (VRAMTRACE_PYTHON=0 or VRAMTRACE_DEPTH=0)\n");
        return;
    }
    if (!strcmp(in->capture, "unsupported")) {
        printf("native only: vramtrace reads the frames of CPython 3.9 to 3.13\n");
        return;
    }
    uint64_t held = in->held, rel = in->released, missed = in->missed, native = in->native, walked = in->walked;
    if (!walked)
        printf("Python frames for %llu allocations (%llu on threads holding the GIL, %llu read for threads that "
               "released it)", (unsigned long long)(held + rel), (unsigned long long)held, (unsigned long long)rel);
    else if (walked == held + rel)
        printf("Python frames for %llu allocations (%llu on threads holding the GIL, %llu on threads that released "
               "it; all read by the allocating thread itself)", (unsigned long long)(held + rel),
               (unsigned long long)held, (unsigned long long)rel);
    else
        printf("Python frames for %llu allocations (%llu on threads holding the GIL, %llu on threads that released "
               "it; %llu read by the allocating thread itself, the others through the interpreter)",
               (unsigned long long)(held + rel), (unsigned long long)held, (unsigned long long)rel,
               (unsigned long long)walked);
    if (in->unchecked)
        printf(", %llu of them read carefully before the walk was checked (before vramtrace's helper could take "
               "the GIL to check it, or VRAMTRACE_PY_WAIT=0)",
               (unsigned long long)in->unchecked);
    uint64_t reused = in->native_reused;
    if (reused)
        printf(", %llu with the native frames of an earlier one (same Python stack and caller)",
               (unsigned long long)reused);
    if (native)
        printf(", %llu on native threads", (unsigned long long)native);
    if (missed)
        printf(", %llu missed (the GIL was not free in time, or VRAMTRACE_PY_WAIT=0)", (unsigned long long)missed);
    putchar('\n');
}

static void vt_bridges_text(const struct vt_result *r)
{
    const struct vt_result_python *py = &r->python;
    if (!py->present && !r->interp.present)
        return;
    if (r->interp.present)
        printf("\npython (CPython %s)\n", r->interp.version);
    else
        printf("\nbridges (this process hosts Python)\n");
    if (r->interp.present)
        vt_call_sites_text(&r->interp);
    if (!py->present)
        return;
    printf("  %-13s %s", "bridges", py->status);
    if (!strcmp(py->status, "ok"))
        printf(": waited %.0f µs for the GIL, ran %.1f ms", vt_us(py->gil_wait_ns), vt_us(py->run_ns) / 1e3);
    if (py->warm_ns)
        printf("; its code compiled ahead, at the program's first CUDA call (the GIL held %.1f ms then)",
               vt_us(py->warm_ns) / 1e3);
    if (py->detail)
        printf(": %s", py->detail);
    putchar('\n');
    for (size_t i = 0; i < py->nbridges; i++)
        printf("  %-13s %s%s%s\n", py->bridges[i].name, py->bridges[i].status, py->bridges[i].detail ? ": " : "",
               py->bridges[i].detail ? py->bridges[i].detail : "");
    if (py->history[0])
        printf("  %-13s torch's block history %s%s%s\n", "history", py->history, py->history_detail ? ": " : "",
               py->history_detail ? py->history_detail : "");
}

static double vt_pct(uint64_t part, uint64_t whole)
{
    return whole ? 100.0 * (double)part / (double)whole : 0;
}

/* How much of the allocated device memory has a call site, in all and by allocator. */
static void vt_coverage_text(const struct vt_result *r)
{
    if (!r->allocated)
        return;
    printf("  %-13s %.1f %% of the allocated bytes have a call site", "stacks", vt_pct(r->with_stack, r->allocated));
    for (int k = 0; k < r->ncoverage; k++) {
        char a[32];
        vt_human(r->coverage[k].allocated, a, sizeof a);
        printf("%s %s %.1f %% of %s", k ? "," : ":", r->coverage[k].allocator,
               vt_pct(r->coverage[k].with_stack, r->coverage[k].allocated), a);
    }
    putchar('\n');
    if (r->tracker[0]) /* where torch's blocks got their call sites */
        printf("  %-13s torch's trace tracker %s%s%s\n", "tracker", r->tracker, r->tracker_detail ? ": " : "",
               r->tracker_detail ? r->tracker_detail : "");
}

static void vt_fig(const char *label, uint64_t v, const char *why_unknown)
{
    char b[32];
    if (v == VT_DF_UNKNOWN) {
        printf("  %-13s unknown%s%s\n", label, why_unknown ? " " : "", why_unknown ? why_unknown : "");
    } else {
        vt_human(v, b, sizeof b);
        printf("  %-13s %s\n", label, b);
    }
}

/* Requests that failed for lack of memory: what was asked for, how often, what the device had left. */
static void vt_failed_text(const struct vt_report_opts *o, const struct vt_model *m)
{
    const struct vt_result *r = &m->result;
    uint64_t all = r->oom_events, listed = 0;
    if (!m->nfailed)
        return;
    char a[32], b[32];
    for (size_t i = 0; i < m->nfailed; i++)
        listed += m->failed[i].count;
    printf("\nfailed requests (out of memory): %llu\n", (unsigned long long)(all > listed ? all : listed));
    for (size_t i = 0; i < m->nfailed; i++) {
        const struct vt_site *s = &m->failed[i];
        const struct vt_result_failed *f = &r->failed[i];
        vt_human(s->bytes, a, sizeof a);
        printf("%11s × %llu %s", a, (unsigned long long)s->count, s->api);
        if (s->device >= 0)
            printf(", device %d", s->device);
        if (f->free_then != VT_DF_UNKNOWN) {
            vt_human(f->free_then, b, sizeof b);
            printf(", %s free then", b);
        }
        if (f->ago_ns != VT_DF_UNKNOWN)
            printf(", last %.1f s before this dump", (double)f->ago_ns / 1e9);
        putchar('\n');
        vt_site_print_frames(s, "             ", VT_TEXT_FRAMES, o->full);
        if (!s->nframes)
            printf("             (no stack recorded)\n");
    }
    if (all > listed)
        printf("  and %llu more, of requests not listed (the newest %zu distinct ones are kept)\n",
               (unsigned long long)(all - listed), m->nfailed);
}

/* How many of a peak's sites the reports name. */
#define VT_PEAK_SITES 5

/* The device's peak of reserved memory, when, and the sites that held it then. */
static void vt_peak_text(const struct vt_model *m, const struct vt_dev *v)
{
    if (!v->peak)
        return;
    char a[32], b[32];
    vt_human(v->peak, a, sizeof a);
    printf("  %-13s %s reserved", "peak", a);
    const struct vt_dumpfile *d = m->d;
    if (v->peak_time_ns != VT_DF_UNKNOWN && v->peak_time_ns >= d->start_mono && d->time_mono >= v->peak_time_ns)
        printf(", %.1f s after start (%.1f s before this dump)", (double)(v->peak_time_ns - d->start_mono) / 1e9,
               (double)(d->time_mono - v->peak_time_ns) / 1e9);
    else if (v->peak_sites && v->peak_time_ns == VT_DF_UNKNOWN)
        printf(", as this dump was taken");
    printf("\n");
    if (!v->peak_sites) {
        printf("  %-13s (this dump does not say what was live then: written before format version 8)\n", "");
        return;
    }
    const struct vt_site *top[VT_PEAK_SITES];
    size_t n = vt_model_peak_sites(m, v->device, top, VT_PEAK_SITES);
    for (size_t i = 0; i < n && i < VT_PEAK_SITES; i++) {
        vt_human(top[i]->peak_bytes, a, sizeof a);
        const char *name = vt_site_name(top[i]);
        printf("  %-13s %10s  %s%s\n", i ? "" : "at the peak", a, name ? name : "(no stack)",
               top[i]->bytes ? "" : "  (freed since)");
    }
    if (n > VT_PEAK_SITES)
        printf("  %-13s and %zu more sites\n", "", n - VT_PEAK_SITES);
    if (v->peak_attributed < v->peak) {
        vt_human(v->peak - v->peak_attributed, b, sizeof b);
        printf("  %-13s %10s  at no site: %s\n", n ? "" : "at the peak", b,
               m->peak_lost ? "the library ran out of memory for some sites"
                            : "other threads' memory not yet added to the total when the peak was taken");
    }
}

/* The same in JSON: "peak":{"bytes","time_since_start_ns","sites_known","attributed","sites":[...]} or null. */
static void vt_peak_json(FILE *f, const struct vt_model *m, const struct vt_dev *v)
{
    fputs(",\"peak\":", f);
    if (!v->peak) {
        fputs("null", f);
        return;
    }
    const struct vt_dumpfile *d = m->d;
    size_t n = v->peak_sites ? vt_model_peak_sites(m, v->device, NULL, 0) : 0;
    const struct vt_site **all = n ? malloc(n * sizeof *all) : NULL;
    int listed = !n || all; /* out of memory: the list is left empty and said not whole */
    n = all ? vt_model_peak_sites(m, v->device, all, n) : 0;
    fprintf(f, "{\"bytes\":%llu,\"time_since_start_ns\":", (unsigned long long)v->peak);
    if (v->peak_time_ns != VT_DF_UNKNOWN && v->peak_time_ns >= d->start_mono)
        fprintf(f, "%llu", (unsigned long long)(v->peak_time_ns - d->start_mono));
    else
        fputs("null", f);
    fprintf(f, ",\"sites_known\":%s,\"sites_whole\":%s,\"attributed\":%llu,\"sites\":[",
            v->peak_sites ? "true" : "false", v->peak_sites && !m->peak_lost && listed ? "true" : "false",
            (unsigned long long)v->peak_attributed);
    for (size_t i = 0; i < n; i++) {
        fputs(i ? ",{" : "{", f);
        vt_site_json_head(f, all[i]);
        fprintf(f, ",\"bytes\":%llu,\"live_now\":%llu}", (unsigned long long)all[i]->peak_bytes,
                (unsigned long long)all[i]->bytes);
    }
    free(all);
    fputs("]}", f);
}

static void vt_report_text(const struct vt_report_opts *o, const struct vt_model *m)
{
    const struct vt_result *r = &m->result;
    char when[64] = "-", a[32];
    time_t t = (time_t)(r->time_wall / 1000000000u);
    struct tm tm;
    if (gmtime_r(&t, &tm))
        strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S UTC", &tm);
    printf("dump %s\nprocess %ld (%s), reason %s, dump #%lu, %s, %.1f s after start\n", o->path, r->pid,
           r->exe ? r->exe : "-", r->reason, r->seq, when, (double)r->uptime_ns / 1e9);
    for (int k = 0; k < m->ndev; k++) {
        const struct vt_dev *v = &m->dev[m->devidx[k]];
        if (o->device != -2 && v->device != o->device)
            continue;
        if (v->device >= 0)
            printf("\ndevice %d\n", v->device);
        else
            printf("\nno device known (entries whose device the dump does not give)\n");
        vt_fig("process used", v->process_used, "(NVML gave no figure for this process in this dump)");
        vt_fig("overhead", v->overhead,
               v->process_used == VT_DF_UNKNOWN ? "(needs process used)" : "(NVML counts less than is reserved)");
        vt_overhead_text(v);
        vt_fig("reserved", v->reserved, NULL);
        vt_peak_text(m, v);
        vt_fig("allocated", v->allocated, NULL);
        if (v->cached == VT_DF_UNKNOWN) {
            vt_human(v->pool_cached, a, sizeof a);
            printf("  %-13s unknown: no caching allocator's view of plain allocations in this dump, so they count as\n"
                   "                allocated; stream-ordered pools keep %s free\n", "cached", a);
        } else {
            vt_fig("cached", v->cached, NULL);
        }
        if (v->cached != VT_DF_UNKNOWN) {
            vt_fig("  releasable", v->releasable, v->has_views ? "(an allocator's view does not say)" : "(the pools do not say)");
            vt_fig("  fragmented", v->fragmented, v->has_views ? "(an allocator's view does not say)" : "(the pools do not say)");
        }
        for (size_t i = 0; i < m->views.n; i++)
            if (m->views.v[i].device == v->device)
                vt_view_text(&m->views.v[i]);
        if (v->libs.n) {
            printf("  %-13s ", "libraries");
            vt_libs_text(&v->libs);
            printf(" (taken for themselves, outside any caching allocator)\n");
        }
        vt_fig("managed", v->managed, NULL);
        if (v->total != VT_DF_UNKNOWN && v->free != VT_DF_UNKNOWN) {
            char b[32];
            vt_human(v->total - v->free, a, sizeof a);
            vt_human(v->total, b, sizeof b);
            printf("  %-13s %s of %s (all processes)\n", "device used", a, b);
        } else if (r->capturing) {
            printf("  %-13s not read: a CUDA graph was being captured when the dump was written, and asking the\n"
                   "  %-13s driver then could have broken the capture (free memory, pools and limits left unknown)\n",
                   "device used", "");
        }
    }
    vt_human(m->host_pinned, a, sizeof a);
    printf("\nprocess\n  %-13s %s\n", "pinned host", a);
    if (m->host_registered) {
        vt_human(m->host_registered, a, sizeof a);
        printf("  %-13s %s (the program's own memory, pinned by cuMemHostRegister)\n", "registered", a);
    }
    if (m->imported || m->external) {
        vt_human(m->imported, a, sizeof a);
        printf("  %-13s %s mapped from other owners (IPC, pool imports, external memory buffers)", "imported", a);
        if (m->external) {
            vt_human(m->external, a, sizeof a);
            printf("; external memory objects %s", a);
        }
        printf(": not this process's reserved memory\n");
    }
    if (m->va_reserved) {
        vt_human(m->va_reserved, a, sizeof a);
        printf("  %-13s %s (address space, not memory)\n", "VA reserved", a);
    }
    vt_coverage_text(r);
    vt_self_cost_text(&m->self, "");
    vt_bridges_text(r);
    vt_failed_text(o, m);
    int is_exit = r->at_exit;
    /* Allocated memory by call site first; the caching allocators' segments after, apart: their
     * allocated part is already listed under their blocks' sites. */
    for (int segs = 0; segs < 2; segs++) {
    long shown = 0;
    for (size_t i = 0; i < m->nsites && shown < o->top; i++) {
        const struct vt_site *s = &m->sites[i];
        if (!vt_site_shown(o, s) || (s->role == VT_ROLE_SEGMENT) != segs)
            continue;
        if (!shown && segs)
            printf("\ncaching allocators' segments (reserved; what is allocated in them is listed above by block):\n");
        else if (!shown)
            printf("\n%s:\n", is_exit ? "leaks: live at exit, by call site" : "top call sites by live bytes");
        shown++;
        vt_human(s->bytes, a, sizeof a);
        printf("%11s in %llu × %s (%s)", a, (unsigned long long)s->count, s->kind, s->api);
        if (s->device >= 0)
            printf(", device %d", s->device);
        if (s->library[0])
            printf(", taken by %s", s->library);
        putchar('\n');
        vt_site_print_frames(s, "             ", VT_TEXT_FRAMES, o->full);
        if (!s->nframes)
            printf("             (no stack recorded)\n");
    }
    if (!shown && !segs)
        printf("\n%s:\n  none\n", is_exit ? "leaks: live at exit, by call site" : "top call sites by live bytes");
    }
}

static void vt_json_site(FILE *f, const struct vt_site *s)
{
    fputc('{', f);
    vt_site_json_head(f, s);
    vt_site_json_place(f, s);
    fprintf(f, ",\"live_count\":%llu,\"live_bytes\":%llu}", (unsigned long long)s->count,
            (unsigned long long)s->bytes);
}

static void vt_json_sites(FILE *f, const struct vt_report_opts *o, const struct vt_model *m)
{
    long shown = 0;
    fputc('[', f);
    for (size_t i = 0; i < m->nsites && shown < o->top; i++) {
        if (!vt_site_shown(o, &m->sites[i]))
            continue;
        if (shown++)
            fputc(',', f);
        vt_json_site(f, &m->sites[i]);
    }
    fputc(']', f);
}

void vt_report_json(FILE *f, const struct vt_report_opts *o, const struct vt_model *m)
{
    const struct vt_result *r = &m->result;
    fprintf(f, "{\"pid\":%ld,\"exe\":", r->pid);
    vt_json_str(f, r->exe ? r->exe : "");
    fputs(",\"reason\":", f);
    vt_json_str(f, r->reason);
    fprintf(f, ",\"seq\":%lu,\"time_unix_ns\":%llu,\"uptime_ns\":%llu,\"devices\":[", r->seq,
            (unsigned long long)r->time_wall, (unsigned long long)r->uptime_ns);
    int first = 1;
    for (int k = 0; k < m->ndev; k++) {
        const struct vt_dev *v = &m->dev[m->devidx[k]];
        if (o->device != -2 && v->device != o->device)
            continue;
        fprintf(f, "%s{\"device\":%d,\"total\":", first ? "" : ",", v->device);
        first = 0;
        static const char *const keys[] = {"free", "process_used", "reserved", "allocated", "cached",
                                           "releasable", "fragmented", "overhead", "managed", "pool_cached"};
        const uint64_t vals[] = {v->free, v->process_used, v->reserved, v->allocated, v->cached,
                                 v->releasable, v->fragmented, v->overhead, v->managed, v->pool_cached};
        vt_json_u64(f, v->total);
        for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
            fprintf(f, ",\"%s\":", keys[i]);
            vt_json_u64(f, vals[i]);
        }
        vt_peak_json(f, m, v);
        fputs(",\"overhead_parts\":", f);
        if (v->has_limits) {
            static const char *const pkeys[] = {"local_memory", "malloc_heap", "printf_fifo", "driver_internals"};
            const uint64_t pvals[] = {v->local_memory, v->malloc_heap, v->printf_fifo, v->internals};
            for (size_t i = 0; i < 4; i++) {
                fprintf(f, "%s\"%s\":", i ? "," : "{", pkeys[i]);
                vt_json_u64(f, pvals[i]);
            }
            fputc('}', f);
        } else {
            fputs("null", f);
        }
        /* Pinned host memory belongs to the process, not to a device: see the top-level key. */
        fputs(",\"host_pinned\":null,\"allocators\":[", f);
        int nv = 0;
        for (size_t i = 0; i < m->views.n; i++) {
            const struct vt_view *w = &m->views.v[i];
            if (w->device != v->device)
                continue;
            fprintf(f, "%s{\"name\":", nv++ ? "," : "");
            vt_json_str(f, w->name);
            fputs(",\"backend\":", f);
            vt_json_str(f, w->backend);
            static const char *const vk[] = {"reserved", "allocated", "releasable", "fragmented", "pending_free",
                                             "own_allocated", "own_reserved"};
            const uint64_t vv[] = {w->reserved, w->allocated, w->releasable, w->fragmented, w->pending_free,
                                   w->own_allocated, w->own_reserved};
            for (size_t k = 0; k < sizeof vk / sizeof vk[0]; k++) {
                fprintf(f, ",\"%s\":", vk[k]);
                vt_json_u64(f, vv[k]);
            }
            fprintf(f, ",\"segments\":%llu,\"blocks\":%llu,\"blocks_without_stack\":%llu,\"segments_matched\":%llu,"
                       "\"segments_unmatched\":%llu,\"driver_allocations_unmatched\":%llu,\"source\":",
                    (unsigned long long)w->segments, (unsigned long long)w->blocks, (unsigned long long)w->blocks_nostack,
                    (unsigned long long)w->matched, (unsigned long long)w->unmatched, (unsigned long long)w->orphans);
            vt_json_str(f, w->source ? w->source : "");
            fputc('}', f);
        }
        fputs("],\"libraries\":", f);
        vt_libs_json(f, &v->libs);
        fputc('}', f);
    }
    fprintf(f, "],\"host_pinned\":%llu,\"host_registered\":%llu,\"imported\":%llu,\"external\":%llu,"
               "\"va_reserved\":%llu,\"stack_coverage\":{\"allocated\":%llu,\"with_stack\":%llu,\"allocators\":[",
            (unsigned long long)m->host_pinned, (unsigned long long)m->host_registered,
            (unsigned long long)m->imported, (unsigned long long)m->external, (unsigned long long)m->va_reserved,
            (unsigned long long)r->allocated, (unsigned long long)r->with_stack);
    for (int k = 0; k < r->ncoverage; k++) {
        fprintf(f, "%s{\"allocator\":", k ? "," : "");
        vt_json_str(f, r->coverage[k].allocator);
        fprintf(f, ",\"allocated\":%llu,\"with_stack\":%llu}", (unsigned long long)r->coverage[k].allocated,
                (unsigned long long)r->coverage[k].with_stack);
    }
    fputs("]},\"torch_tracker\":", f);
    if (r->tracker[0]) {
        fputs("{\"state\":", f);
        vt_json_str(f, r->tracker);
        fputs(",\"detail\":", f);
        vt_json_str_or_null(f, r->tracker_detail);
        fputc('}', f);
    } else {
        fputs("null", f);
    }
    fputs(",\"self_cost\":", f);
    vt_self_cost_json(f, &m->self);
    fputs(",\"python\":", f);
    const struct vt_result_python *py = &r->python;
    if (py->present) {
        fputs("{\"status\":", f);
        vt_json_str(f, py->status);
        fprintf(f, ",\"gil_wait_ns\":%llu,\"run_ns\":%llu,\"warm_ns\":%llu,\"detail\":",
                (unsigned long long)py->gil_wait_ns, (unsigned long long)py->run_ns, (unsigned long long)py->warm_ns);
        vt_json_str_or_null(f, py->detail);
        fputs(",\"torch_history\":", f);
        vt_json_str_or_null(f, py->history[0] ? py->history : NULL);
        fputs(",\"torch_history_detail\":", f);
        vt_json_str_or_null(f, py->history_detail);
        fputs(",\"bridges\":[", f);
        for (size_t i = 0; i < py->nbridges; i++) {
            fprintf(f, "%s{\"name\":", i ? "," : "");
            vt_json_str(f, py->bridges[i].name);
            fputs(",\"status\":", f);
            vt_json_str(f, py->bridges[i].status);
            fputs(",\"detail\":", f);
            vt_json_str_or_null(f, py->bridges[i].detail);
            fputc('}', f);
        }
        fputs("]}", f);
    } else {
        fputs("null", f);
    }
    const struct vt_result_interp *in = &r->interp;
    fputs(",\"interpreter\":", f);
    if (in->present) {
        fputs("{\"version\":", f);
        vt_json_str(f, in->version);
        fputs(",\"python_call_sites\":", f);
        vt_json_str(f, in->capture);
        /* The counters' names in the dump, less their "py_". */
        const struct {
            const char *key;
            uint64_t v;
        } counts[] = {{&VT_CTR_PY_HELD[3], in->held},     {&VT_CTR_PY_RELEASED[3], in->released},
                      {&VT_CTR_PY_MISSED[3], in->missed}, {&VT_CTR_PY_NATIVE[3], in->native},
                      {&VT_CTR_PY_WALKED[3], in->walked}, {&VT_CTR_PY_UNCHECKED[3], in->unchecked},
                      {VT_CTR_NATIVE_REUSED, in->native_reused},
                      {&VT_CTR_PY_FRAMES[3], in->frames}, {&VT_CTR_PY_CODE_READS[3], in->code_reads},
                      {&VT_CTR_PY_LOOKUPS[3], in->lookups}, {&VT_CTR_PY_STATE_READ[3], in->state_read}};
        for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++)
            fprintf(f, ",\"%s\":%llu", counts[i].key, (unsigned long long)counts[i].v);
        fputc('}', f);
    } else {
        fputs("null", f);
    }
    fprintf(f, ",\"oom_events\":%llu,\"failed\":[", (unsigned long long)r->oom_events);
    for (size_t i = 0; i < m->nfailed; i++) {
        const struct vt_result_failed *fr = &r->failed[i];
        fputs(i ? ",{" : "{", f);
        vt_site_json_head(f, &m->failed[i]);
        fprintf(f, ",\"device\":%d,\"size\":%llu,\"count\":%llu,\"free_then\":", fr->device,
                (unsigned long long)fr->size, (unsigned long long)fr->count);
        vt_json_u64(f, fr->free_then);
        fprintf(f, ",\"first_ns\":%llu,\"last_ns\":%llu,\"result\":%d}", (unsigned long long)fr->first_ns,
                (unsigned long long)fr->last_ns, fr->result);
    }
    fputs("],\"sites\":", f);
    vt_json_sites(f, o, m);
    if (r->at_exit) {
        fputs(",\"leaks\":", f);
        vt_json_sites(f, o, m);
    }
    fputs("}\n", f);
}

/* One line per site, outermost frame first: the input of flamegraph.pl and speedscope. */
static void vt_report_folded(const struct vt_report_opts *o, const struct vt_model *m)
{
    for (size_t i = 0; i < m->nsites; i++) {
        const struct vt_site *s = &m->sites[i];
        if (!vt_site_shown(o, s))
            continue;
        vt_site_folded(stdout, s);
        printf(" %llu\n", (unsigned long long)s->bytes);
    }
}

static int vt_report_word(void *args, int argc, char **argv, int *i)
{
    (void)args;
    (void)argc;
    if (argv[*i][0] != '-')
        return VT_WORD_OPERAND; /* a dump */
    return vt_usage_error("report", "unexpected argument '%s'", argv[*i]);
}

static int vt_report_pprof_out(const struct vt_report_opts *o, const struct vt_model *m)
{
    return vt_pprof_write(o->pprof, m, o->device, o->path) < 0;
}

static int vt_report_prometheus_out(const struct vt_report_opts *o, const struct vt_model *m)
{
    if (vt_metrics_text(stdout, m, (int)o->top) < 0) {
        fprintf(stderr, "vramtrace: out of memory\n");
        return 1;
    }
    return 0;
}

static int vt_report_json_out(const struct vt_report_opts *o, const struct vt_model *m)
{
    vt_report_json(stdout, o, m);
    return 0;
}

static int vt_report_folded_out(const struct vt_report_opts *o, const struct vt_model *m)
{
    vt_report_folded(o, m);
    return 0;
}

static int vt_report_text_out(const struct vt_report_opts *o, const struct vt_model *m)
{
    vt_report_text(o, m);
    return 0;
}

/* The formats' rows as the dispatch reads them. */
struct vt_report_format {
    const char *flag;
    int asked; /* filled per run */
    int rank;
    int (*render)(const struct vt_report_opts *o, const struct vt_model *m);
    int several, every;
};

static int vt_report_run(void *args, char **paths, int npaths)
{
    struct vt_report_opts o = *(struct vt_report_opts *)args;
    struct vt_report_format formats[] = {
#define VT_REPORT_ROW(id, flag, arg, help, kind, render, rank, several, every) {flag, o.id != 0, rank, render, several, every},
        VT_REPORT_FORMATS(VT_REPORT_ROW)
#undef VT_REPORT_ROW
    };
    const size_t nformats = sizeof formats / sizeof formats[0];
    const struct vt_report_format *chosen = NULL;
    int every = 0;
    for (size_t i = 0; i < nformats; i++) {
        every |= formats[i].asked && formats[i].every;
        if (formats[i].asked && (!chosen || formats[i].rank < chosen->rank))
            chosen = &formats[i];
    }
    if (!npaths)
        return vt_usage_error("report", "no dump given");
    if (o.top < 0)
        o.top = every ? 0x7fffffff : 10;
    if (npaths > 1) {
        if (chosen && !chosen->several)
            return vt_usage_error("report", "%s takes one dump", chosen->flag);
        if (o.json && o.folded)
            return vt_usage_error("report", "--json and --folded: one or the other");
        return vt_report_processes(paths, npaths, o.top, o.device, o.json, o.folded, o.full);
    }
    o.path = paths[0];
    struct vt_dumpfile d;
    struct vt_model m;
    if (vt_load(o.path, &d) < 0)
        return VT_EXIT_USAGE;
    if (vt_model_build(&d, o.full ? VT_MODEL_FULL_STACKS : 0, &m) < 0) {
        vt_dumpfile_free(&d);
        fprintf(stderr, "vramtrace: out of memory\n");
        return 1;
    }
    int rc = (chosen ? chosen->render : vt_report_text_out)(&o, &m);
    vt_model_free(&m);
    vt_dumpfile_free(&d);
    return rc;
}

#define VT_R(field) offsetof(struct vt_report_opts, field)
static const struct vt_report_opts vt_report_dflt = {.top = -1, .device = -2};
const struct vt_verb vt_verb_report = {
    "report", "report DUMP [OPTIONS]  |  report DUMP DUMP... (one per process)",
    "Where the memory is: per device process used, reserved, allocated, cached (releasable, fragmented),\n"
    "overhead; failed requests; the call sites holding the most live bytes.",
    NULL, sizeof(struct vt_report_opts), &vt_report_dflt, vt_report_word, vt_report_run, 0, 0,
    {{"--top", "N", "show the N largest call sites (default 10)", VT_OPT_LONG, VT_R(top), 1, (double)LONG_MAX, 0,
      "--top wants a positive number", NULL, NULL},
     {"--device", "D", "only device D", VT_OPT_INT, VT_R(device), 0, VT_MAX_DEV - 1, 0, "--device wants a device ordinal",
      NULL, NULL},
#define VT_REPORT_OPT(id, flag, arg, help, kind, render, rank, several, every) \
    {flag, arg, help, kind, VT_R(id), 0, 0, 0, NULL, NULL, NULL},
     VT_REPORT_FORMATS(VT_REPORT_OPT)
#undef VT_REPORT_OPT
     {"--full-stacks", NULL, "every frame, none folded away", VT_OPT_FLAG, VT_R(full), 0, 0, 0, NULL, NULL, NULL}}};
