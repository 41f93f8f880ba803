/* vramtrace report DUMP: what a dump holds, for a person. A first version: the header, the device
 * figures the driver gave, live bytes by kind, and the call sites holding the most live bytes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vt_cmd.h"
#include "vt_dumpfile.h"

struct vt_site {
    uint32_t stack;
    const char *kind, *api;
    uint64_t count, bytes;
};

static void vt_human(uint64_t b, char *out, size_t len)
{
    static const char *const unit[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    double v = (double)b;
    int u = 0;
    while (v >= 1024 && u < 4) {
        v /= 1024;
        u++;
    }
    snprintf(out, len, u ? "%.1f %s" : "%.0f %s", v, unit[u]);
}

static int vt_site_cmp(const void *a, const void *b)
{
    const struct vt_site *x = a, *y = b;
    return x->bytes < y->bytes ? 1 : x->bytes > y->bytes ? -1 : 0;
}

int vt_cmd_report(int argc, char **argv)
{
    const char *path = NULL;
    long top = 10;
    for (int i = 1; i < argc; i++) {
        char *end;
        if (!strcmp(argv[i], "--top") && i + 1 < argc) {
            top = strtol(argv[++i], &end, 10);
            if (*end || top <= 0) {
                fprintf(stderr, "vramtrace report: --top wants a positive number\n");
                return VT_EXIT_USAGE;
            }
        } else if (!path && argv[i][0] != '-') {
            path = argv[i];
        } else {
            fprintf(stderr, "vramtrace report: unexpected argument '%s' (usage: vramtrace report DUMP [--top N])\n", argv[i]);
            return VT_EXIT_USAGE;
        }
    }
    if (!path) {
        fprintf(stderr, "vramtrace report: no dump given\n");
        return VT_EXIT_USAGE;
    }
    struct vt_dumpfile d;
    char err[512];
    if (vt_dumpfile_read(path, &d, err, sizeof err) < 0) {
        fprintf(stderr, "vramtrace: %s\n", err);
        return VT_EXIT_USAGE;
    }
    char a[32], b[32];
    printf("dump %s: pid %ld, %s, reason %s, dump #%lu\n", path, d.pid, d.exe ? d.exe : "-", d.reason, d.seq);
    for (size_t i = 0; i < d.ndevices; i++) {
        const struct vt_df_device *v = &d.devices[i];
        vt_human(v->reserved, a, sizeof a);
        vt_human(v->reserved_peak, b, sizeof b);
        printf("device %d: reserved by plain and VMM allocations %s (peak %s)", v->ordinal, a, b);
        if (v->total != VT_DF_UNKNOWN && v->free != VT_DF_UNKNOWN) {
            vt_human(v->total - v->free, a, sizeof a);
            vt_human(v->total, b, sizeof b);
            printf(", device used %s of %s", a, b);
        }
        putchar('\n');
    }
    for (size_t i = 0; i < d.npools; i++) {
        const struct vt_df_pool *v = &d.pools[i];
        if (v->reserved == VT_DF_UNKNOWN || v->used == VT_DF_UNKNOWN)
            continue;
        vt_human(v->reserved, a, sizeof a);
        vt_human(v->used, b, sizeof b);
        printf("pool 0x%llx (device %d, %s): reserved %s, used %s\n", (unsigned long long)v->handle, v->device,
               v->is_default ? "default" : "explicit", a, b);
    }
    for (size_t i = 0; i < d.nkinds; i++) {
        if (!d.kinds[i].count)
            continue;
        vt_human(d.kinds[i].bytes, a, sizeof a);
        printf("live %-18s %8llu allocations, %s\n", d.kinds[i].name, (unsigned long long)d.kinds[i].count, a);
    }

    struct vt_site *sites = calloc(d.nallocs + d.nphys + 1, sizeof *sites);
    size_t ns = 0;
    if (!sites) {
        fprintf(stderr, "vramtrace: out of memory\n");
        vt_dumpfile_free(&d);
        return 1;
    }
    for (size_t i = 0; i < d.nallocs + d.nphys; i++) {
        int is_alloc = i < d.nallocs;
        const struct vt_df_alloc *al = is_alloc ? &d.allocs[i] : NULL;
        const struct vt_df_phys *ph = is_alloc ? NULL : &d.phys[i - d.nallocs];
        uint32_t st = is_alloc ? al->stack : ph->stack;
        const char *kind = is_alloc ? al->kind : ph->kind, *api = is_alloc ? al->api : ph->api;
        if (!strcmp(kind, "va_reserved") || !strcmp(kind, "vmm_map"))
            continue; /* address space and mappings: the memory is counted at its physical handle */
        size_t j;
        for (j = 0; j < ns; j++)
            if (sites[j].stack == st && !strcmp(sites[j].kind, kind) && !strcmp(sites[j].api, api))
                break;
        if (j == ns)
            sites[ns++] = (struct vt_site){st, kind, api, 0, 0};
        sites[j].count++;
        sites[j].bytes += is_alloc ? al->size : ph->size;
    }
    qsort(sites, ns, sizeof *sites, vt_site_cmp);
    printf("\ntop call sites by live bytes%s:\n", !strcmp(d.reason, "exit") ? " (never freed: leaked at exit)" : "");
    for (size_t i = 0; i < ns && (long)i < top; i++) {
        vt_human(sites[i].bytes, a, sizeof a);
        printf("%10s in %llu %s (%s)\n", a, (unsigned long long)sites[i].count, sites[i].kind, sites[i].api);
        const struct vt_df_stack *st = vt_df_stack(&d, sites[i].stack);
        for (uint32_t k = 0; st && k < st->n; k++) {
            const char *name = vt_df_frame_name(&d, st->pc[k]);
            if (name)
                printf("             %s\n", name);
            else
                printf("             0x%llx\n", (unsigned long long)st->pc[k]);
        }
    }
    free(sites);
    vt_dumpfile_free(&d);
    return 0;
}
