/* vt_result.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vt_format.h"
#include "vt_model.h"
#include "vt_result.h"

static void vt_result_python(const struct vt_dumpfile *d, struct vt_result_python *p)
{
    const struct vt_df_python *py = &d->python;
    p->present = py->present;
    snprintf(p->status, sizeof p->status, "%s", py->status);
    p->detail = py->detail;
    p->gil_wait_ns = py->wait_ns;
    p->run_ns = py->run_ns;
    p->warm_ns = vt_df_counter(d, VT_CTR_BRIDGE_WARM_NS);
    snprintf(p->history, sizeof p->history, "%s", py->history);
    p->history_detail = py->history_detail;
}

static void vt_result_interp(const struct vt_dumpfile *d, struct vt_result_interp *in)
{
    in->present = d->interpreter.present;
    snprintf(in->version, sizeof in->version, "%s", d->interpreter.version);
    snprintf(in->capture, sizeof in->capture, "%s", d->interpreter.capture);
    in->held = vt_df_counter(d, VT_CTR_PY_HELD);
    in->released = vt_df_counter(d, VT_CTR_PY_RELEASED);
    in->missed = vt_df_counter(d, VT_CTR_PY_MISSED);
    in->native = vt_df_counter(d, VT_CTR_PY_NATIVE);
    in->walked = vt_df_counter(d, VT_CTR_PY_WALKED);
    in->unchecked = vt_df_counter(d, VT_CTR_PY_UNCHECKED);
    in->native_reused = vt_df_counter(d, VT_CTR_NATIVE_REUSED);
    in->frames = vt_df_counter(d, VT_CTR_PY_FRAMES);
    in->code_reads = vt_df_counter(d, VT_CTR_PY_CODE_READS);
    in->lookups = vt_df_counter(d, VT_CTR_PY_LOOKUPS);
    in->state_read = vt_df_counter(d, VT_CTR_PY_STATE_READ);
}

int vt_result_build(const struct vt_dumpfile *d, struct vt_result *r)
{
    memset(r, 0, sizeof *r);
    if (d->tracker.present) {
        snprintf(r->tracker, sizeof r->tracker, "%s", d->tracker.state);
        r->tracker_detail = d->tracker.detail;
    }
    r->pid = d->pid;
    r->exe = d->exe;
    snprintf(r->reason, sizeof r->reason, "%s", d->reason);
    r->at_exit = !strcmp(d->reason, "exit");
    r->seq = d->seq;
    r->time_wall = d->time_wall;
    r->uptime_ns = d->time_mono - d->start_mono;
    vt_result_python(d, &r->python);
    vt_result_interp(d, &r->interp);
    r->oom_events = vt_df_counter(d, VT_CTR_OOM_EVENTS);
    r->capturing = vt_df_counter(d, VT_CTR_CAPTURING);
    for (size_t i = 0; i < d->napis; i++) {
        r->api_allocs += d->apis[i].allocs;
        r->api_frees += d->apis[i].frees;
        r->api_failed += d->apis[i].failed;
    }
    if ((d->nbridges && !(r->python.bridges = calloc(d->nbridges, sizeof *r->python.bridges))) ||
        (d->nfailed && !(r->failed = calloc(d->nfailed, sizeof *r->failed)))) {
        vt_result_free(r);
        return -1;
    }
    for (size_t i = 0; i < d->nbridges; i++)
        r->python.bridges[i] = (struct vt_result_bridge){d->bridges[i].name, d->bridges[i].status, d->bridges[i].detail};
    r->python.nbridges = d->nbridges;
    for (size_t i = 0; i < d->nfailed; i++) {
        const struct vt_df_failed *f = &d->failed[i];
        r->failed[i] = (struct vt_result_failed){
            .device = f->device, .result = f->result, .size = f->size, .count = f->count, .first_ns = f->first_ns,
            .last_ns = f->last_ns, .free_then = f->free_then,
            .ago_ns = d->time_mono >= f->last_ns ? d->time_mono - f->last_ns : VT_DF_UNKNOWN};
    }
    r->nfailed = d->nfailed;
    return 0;
}

void vt_result_free(struct vt_result *r)
{
    free(r->python.bridges);
    free(r->failed);
    memset(r, 0, sizeof *r);
}

void vt_result_coverage(struct vt_result *r, const struct vt_site *sites, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const struct vt_site *s = &sites[i];
        if (s->role != VT_ROLE_ALLOCATED || s->device < 0)
            continue;
        const char *who = !strcmp(s->kind, "block") ? s->api : "driver";
        int k = 0;
        while (k < r->ncoverage && strcmp(r->coverage[k].allocator, who))
            k++;
        if (k == r->ncoverage) {
            if (r->ncoverage < VT_RESULT_COVERAGE)
                snprintf(r->coverage[r->ncoverage++].allocator, sizeof r->coverage[0].allocator, "%s", who);
            else /* more allocators than that: the last row takes the rest */
                snprintf(r->coverage[(k = VT_RESULT_COVERAGE - 1)].allocator, sizeof r->coverage[0].allocator, "others");
        }
        int stacked = s->nframes && !s->unstacked;
        r->coverage[k].allocated += s->bytes;
        r->coverage[k].with_stack += stacked ? s->bytes : 0;
        r->allocated += s->bytes;
        r->with_stack += stacked ? s->bytes : 0;
    }
    for (int a = 1; a < r->ncoverage; a++) /* largest first */
        for (int b = a; b > 0 && r->coverage[b].allocated > r->coverage[b - 1].allocated; b--) {
            struct vt_result_coverage t = r->coverage[b];
            r->coverage[b] = r->coverage[b - 1];
            r->coverage[b - 1] = t;
        }
}
