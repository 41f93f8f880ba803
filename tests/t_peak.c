/* A device's peak of reserved memory: the figure, when, and what held it then, by site, as the dump
 * records it (peak, peak_freed) and as report (text and JSON) shows it. The program (prog_driver peak)
 * makes a peak of 8 MiB, 5 of which are freed before the first dump, then a higher one of 11 MiB. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

#define MiB (1ull << 20)

static const struct vt_df_peak *peak_of(const struct vt_dumpfile *d, int device)
{
    for (size_t i = 0; i < d->npeaks; i++)
        if (d->peaks[i].device == device)
            return &d->peaks[i];
    return NULL;
}

/* The bytes report --json gives the peak site whose name holds fn (UINT64_MAX: none). */
static uint64_t peak_site_bytes(const char *json, const char *fn)
{
    const char *peak = strstr(json, "\"peak\":{");
    const char *end = peak ? strstr(peak, "]}") : NULL;
    const char *at = peak ? strstr(peak, fn) : NULL;
    if (!at || at > end)
        return UINT64_MAX;
    return json_num(at, "", "bytes");
}

int main(void)
{
    struct run r;
    const char *args[] = {"peak", NULL};
    run_prog(&r, "prog_driver", args, NULL, 1);
    ok(r.status == 0, "the program ran");
    struct vt_dumpfile d[3];
    size_t n = load_dumps(&r, d, 3);
    ok(n >= 2, "two dumps and the exit dump (%zu)", n);
    if (n < 2) {
        run_free(&r);
        return tap_done();
    }

    /* Dump 1: the peak of 8 MiB, 5 MiB of it freed since, at its site. */
    const struct vt_df_peak *p = peak_of(&d[0], 0);
    ok(p && p->bytes == 8 * MiB, "dump 1: the peak is 8 MiB (%llu)", p ? (unsigned long long)p->bytes : 0ull);
    ok(p && p->time_ns != VT_DF_UNKNOWN && p->time_ns >= d[0].start_mono && p->time_ns <= d[0].time_mono,
       "dump 1: the peak has a time between the start and the dump");
    uint64_t gone = 0;
    for (size_t i = 0; i < d[0].npeak_freed; i++)
        if (stack_has(&d[0], d[0].peak_freed[i].stack, "peak_gone_site"))
            gone += d[0].peak_freed[i].bytes;
    is_u64(gone, 5 * MiB, "dump 1: 5 MiB live at the peak and freed since, at peak_gone_site");
    ok(d[0].npeak_freed == 1, "dump 1: no other site freed memory of the peak (%zu)", d[0].npeak_freed);

    char path[700];
    snprintf(path, sizeof path, "%s/vramtrace.%ld.1.dump", r.dir, r.pid);
    struct run rep;
    const char *json_args[] = {"report", path, "--json", NULL};
    run_prog(&rep, "../vramtrace", json_args, NULL, 0);
    ok(rep.status == 0 && strstr(rep.out, "\"peak\":{\"bytes\":8388608,") != NULL, "report --json: the peak's bytes");
    is_u64(json_num(rep.out, "\"peak\":{", "attributed"), 8 * MiB, "report --json: all of the peak at sites");
    is_u64(peak_site_bytes(rep.out, "peak_gone_site"), 5 * MiB, "report --json: peak_gone_site held 5 MiB of it");
    is_u64(peak_site_bytes(rep.out, "peak_kept_site"), 3 * MiB, "report --json: peak_kept_site held 3 MiB of it");
    ok(peak_site_bytes(rep.out, "peak_after_site") == UINT64_MAX, "report --json: peak_after_site came after it");
    run_free(&rep);
    const char *text_args[] = {"report", path, NULL};
    run_prog(&rep, "../vramtrace", text_args, NULL, 0);
    const char *line = strstr(rep.out, "  peak ");
    ok(rep.status == 0 && line && strstr(line, "8.0 MiB reserved") && strstr(line, "s after start"),
       "report: the peak line, with when");
    /* The program made 12 calls, fewer than the one in 61 that is timed, on the fake driver. */
    ok(strstr(rep.out, "vramtrace     hooks not measured (no call of the 12 was timed") != NULL,
       "report: the hooks' cost is said to be not measured when no call was timed, not 0 ns");
    ok(strstr(rep.out, "on the bundled fake CUDA driver, whose calls cost nothing") != NULL,
       "report: the self-cost line says the figures come from the fake driver");
    const char *at = strstr(rep.out, "at the peak");
    ok(at && strstr(at, "peak_gone_site") && strstr(at, "(freed since)"), "report: the freed site at the peak");
    if (!at)
        diag("%s", rep.out);
    run_free(&rep);

    /* Dump 2: a new peak of 11 MiB; what was freed before it no longer counts. */
    p = peak_of(&d[1], 0);
    ok(p && p->bytes == 11 * MiB, "dump 2: the peak is 11 MiB (%llu)", p ? (unsigned long long)p->bytes : 0ull);
    ok(d[1].npeak_freed == 0, "dump 2: nothing of the new peak was freed (%zu records)", d[1].npeak_freed);
    snprintf(path, sizeof path, "%s/vramtrace.%ld.2.dump", r.dir, r.pid);
    const char *json2[] = {"report", path, "--json", NULL};
    run_prog(&rep, "../vramtrace", json2, NULL, 0);
    /* Its two calls are two sites (two lines of mode_peak): the larger first. */
    is_u64(peak_site_bytes(rep.out, "peak_after_site"), 6 * MiB, "report --json: peak_after_site's second call held 6 MiB of it");
    is_u64(json_num(rep.out, "\"peak\":{", "attributed"), 11 * MiB, "report --json: all of the new peak at sites");
    ok(peak_site_bytes(rep.out, "peak_gone_site") == UINT64_MAX, "report --json: peak_gone_site is no part of it");
    run_free(&rep);

    free_dumps(d, n);
    run_free(&r);
    return tap_done();
}
