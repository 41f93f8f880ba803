/* VMM handles in several orders, pools with trim, managed and pinned host memory: the state each
 * dump shows along the way. Two devices: memory counted on the device that holds it. */
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

#define MiB (1ull << 20)

static const struct vt_df_phys *only_phys(const struct vt_dumpfile *d)
{
    return d->nphys == 1 ? &d->phys[0] : NULL;
}

static void test_vmm(void)
{
    struct run r;
    struct vt_dumpfile d[8];
    const char *args[] = {"vmm", NULL};
    run_prog(&r, "prog_driver", args, NULL, 1);
    size_t n = load_dumps(&r, d, 8);
    if (!ok(r.status == 0 && n == 7, "vmm: six API dumps and the exit dump")) {
        diag("status %d, %zu dumps; stderr: %s", r.status, n, r.err);
        free_dumps(d, n);
        run_free(&r);
        return;
    }
    const struct vt_df_phys *p = only_phys(&d[0]);
    ok(p && p->size == 2 * MiB && p->refs == 1 && p->maps == 1 && p->kind == VT_KIND_PHYS,
       "created and mapped: one handle, refs 1, maps 1");
    ok(p && p->device == 0, "device from prop->location");
    /* Stamped in the CPU's ticks where it can (vt_clock.h), written as CLOCK_MONOTONIC nanoseconds. */
    ok(p && p->time_ns >= d[0].start_mono && p->time_ns <= d[0].time_mono,
       "its time is on the dump's clock: after the library started, before the dump (%llu in %llu..%llu)",
       p ? (unsigned long long)p->time_ns : 0ull, (unsigned long long)d[0].start_mono, (unsigned long long)d[0].time_mono);
    is_u64(count_allocs(&d[0], "vmm_map", "cuMemMap", 2 * MiB), 1, "one mapping");
    is_u64(count_allocs(&d[0], "va_reserved", "cuMemAddressReserve", 8 * MiB), 1, "the reservation");
    is_u64(d[0].devices[0].reserved, 2 * MiB, "reserved counts the physical handle, not the address space");
    p = only_phys(&d[1]);
    ok(p && p->refs == 1 && p->maps == 0, "unmapped before release: still live");
    is_u64(count_allocs(&d[1], "vmm_map", NULL, 0), 0, "mapping gone");
    is_u64(d[2].nphys, 0, "released after unmap: gone");
    is_u64(d[2].devices[0].reserved, 0, "reserved back to 0");
    p = only_phys(&d[3]);
    ok(p && p->size == 4 * MiB && p->refs == 0 && p->maps == 1, "released before unmap: live through its mapping");
    p = only_phys(&d[4]);
    ok(p && p->refs == 1 && p->maps == 0, "retained, then unmapped: live through the retained reference");
    is_u64(d[5].nphys + d[5].nallocs, 0, "everything released, unmapped and freed");
    is_u64(vt_df_counter(&d[5], "unknown_frees"), 1, "the failed second release counted as unknown, nothing else");
    const struct vt_df_api *cr = vt_df_api(&d[5], "cuMemCreate");
    ok(cr && cr->allocs == 4 && cr->frees == 4, "four handles created, four freed");
    const struct vt_df_api *mp = vt_df_api(&d[5], "cuMemMap");
    ok(mp && mp->allocs == 4 && mp->frees == 4, "four mappings made, four removed (two by one unmap)");
    free_dumps(d, n);
    run_free(&r);
}

static void test_pool(void)
{
    struct run r;
    struct vt_dumpfile d[6];
    const char *args[] = {"pool", NULL};
    run_prog(&r, "prog_driver", args, NULL, 1);
    size_t n = load_dumps(&r, d, 6);
    char buf[64];
    uint64_t pool = strtoull(out_value(&r, "pool", buf, sizeof buf) ? buf : "0", NULL, 16);
    if (!ok(r.status == 0 && n == 5 && pool, "pool: four API dumps and the exit dump")) {
        free_dumps(d, n);
        run_free(&r);
        return;
    }
    static const uint64_t reserved[] = {5 * MiB, 5 * MiB, 1 * MiB, 1 * MiB};
    static const uint64_t used[] = {5 * MiB, 1 * MiB, 1 * MiB, 0};
    static const uint64_t live[] = {2, 1, 1, 0};
    for (int i = 0; i < 4; i++) {
        const struct vt_df_pool *p = NULL;
        for (size_t j = 0; j < d[i].npools; j++)
            if (d[i].pools[j].handle == pool)
                p = &d[i].pools[j];
        ok(p && !p->is_default && p->device == 0, "dump %d lists the explicit pool", i + 1);
        is_u64(p ? p->reserved : 0, reserved[i], "pool reserved (the pool keeps freed memory until trimmed)");
        is_u64(p ? p->used : 0, used[i], "pool used");
        is_u64(count_allocs(&d[i], "async", "cuMemAllocFromPoolAsync", 0), live[i], "live async entries");
        ok(p && p->threshold_known && p->threshold == UINT64_MAX, "release threshold read (UINT64_MAX)");
    }
    const struct vt_df_alloc *a = find_alloc(&d[0], 4 * MiB);
    /* The pool is in the line (its 8th field), which the reader checks but does not keep. */
    char want[64], path[1024];
    snprintf(want, sizeof want, " 4194304 async cuMemAllocFromPoolAsync 0 0x");
    snprintf(path, sizeof path, "%s/vramtrace.%ld.1.dump", r.dir, r.pid);
    char *text = read_text(path), *line = text ? strstr(text, want) : NULL;
    unsigned long long in_line = 0;
    if (line)
        sscanf(line + strlen(want) - 2, "%*s %llx", &in_line);
    ok(a && a->device == 0 && in_line == pool, "async entry carries its pool (0x%llx) and the pool's device", in_line);
    free(text);
    ok(a && stack_has(&d[0], a->stack, "pool_alloc"), "stack names pool_alloc");
    free_dumps(d, n);
    run_free(&r);
}

static void test_kinds(void)
{
    struct run r;
    struct vt_dumpfile d[4];
    const char *args[] = {"kinds", NULL};
    run_prog(&r, "prog_driver", args, NULL, 1);
    size_t n = load_dumps(&r, d, 4);
    char buf[64];
    uint64_t pitch = strtoull(out_value(&r, "pitch", buf, sizeof buf) ? buf : "0", NULL, 10);
    if (!ok(r.status == 0 && n == 3 && pitch, "kinds: two API dumps and the exit dump")) {
        free_dumps(d, n);
        run_free(&r);
        return;
    }
    is_u64(count_allocs(&d[0], "managed", "cuMemAllocManaged", 3 * MiB), 1, "managed is its own kind");
    is_u64(count_allocs(&d[0], "host_pinned", "cuMemAllocHost_v2", 5 * MiB), 1, "cuMemAllocHost is pinned host");
    is_u64(count_allocs(&d[0], "host_pinned", "cuMemHostAlloc", 7 * MiB), 1, "cuMemHostAlloc is pinned host");
    is_u64(count_allocs(&d[0], "device", "cuMemAllocPitch_v2", pitch * 10), 1, "pitched: pitch x height bytes");
    is_u64(d[0].devices[0].reserved, pitch * 10, "device reserved holds neither managed nor host memory");
    const struct vt_df_alloc *m = find_alloc(&d[0], 3 * MiB);
    ok(m && m->device == 0 && stack_has(&d[0], m->stack, "kinds_alloc"), "managed: device 0, stack kinds_alloc");
    const struct vt_df_alloc *h = find_alloc(&d[0], 5 * MiB);
    ok(h && h->device == -1, "host memory has no device");
    is_u64(d[1].nallocs, 0, "all freed");
    const struct vt_df_kind *hk = vt_df_kind(&d[1], "host_pinned");
    ok(hk && hk->count == 0 && hk->allocs == 2 && hk->frees == 2 && hk->bytes_alloc == 12 * MiB &&
           hk->bytes_freed == 12 * MiB,
       "per-kind totals: 2 pinned host allocations and frees, 12 MiB each way");
    const struct vt_df_kind *dk = vt_df_kind(&d[0], "managed");
    ok(dk && dk->count == 1 && dk->bytes == 3 * MiB && dk->allocs == 1 && dk->frees == 0, "managed live 1, 3 MiB");
    is_u64(d[1].devices[0].reserved_peak, pitch * 10, "peak reserved remembered");
    free_dumps(d, n);
    run_free(&r);
}

/* The JSON number after "key": in the text from anchor on (UINT64_MAX when absent). */
static uint64_t num_after(const char *text, const char *anchor, const char *key)
{
    const char *p = anchor ? strstr(text, anchor) : text;
    char k[64];
    snprintf(k, sizeof k, "\"%s\":", key);
    p = p ? strstr(p, k) : NULL;
    return p && strncmp(p + strlen(k), "null", 4) ? strtoull(p + strlen(k), NULL, 10) : UINT64_MAX;
}

static void test_two_devices(void)
{
    struct run r, c;
    struct vt_dumpfile d[2];
    const char *args[] = {"twodev", NULL};
    const char *env[] = {"VRAMTRACE_FAKE_DEVICES=2", "VRAMTRACE_AT_EXIT=0", NULL};
    run_prog(&r, "prog_driver", args, env, 1);
    size_t n = load_dumps(&r, d, 2);
    if (!ok(r.status == 0 && n == 2 && d[0].ndevices == 2, "two devices: dumps with both")) {
        diag("status %d, %zu dumps; stderr: %s", r.status, n, r.err);
        free_dumps(d, n);
        run_free(&r);
        return;
    }
    size_t pools1 = 0;
    for (size_t i = 0; i < d[0].npools; i++)
        pools1 += d[0].pools[i].device == 1 && d[0].pools[i].reserved != 0;
    ok(pools1 == 2, "device 1's default pool and the pool made for it, each on device 1");
    ok(d[0].nphys == 1 && d[0].phys[0].device == 1, "the VMM handle located on device 1 is on device 1, whichever "
                                                  "context was current");
    char path[700];
    snprintf(path, sizeof path, "%s/vramtrace.%ld.1.dump", r.dir, r.pid);
    const char *rargs[] = {"report", path, "--json", NULL};
    run_prog(&c, "../vramtrace", rargs, NULL, 0);
    const char *dev0 = strstr(c.out, "{\"device\":0,"), *dev1 = strstr(c.out, "{\"device\":1,");
    is_u64(num_after(c.out, "{\"device\":0,", "reserved"), 3 * MiB, "device 0 reserved: its plain allocation only");
    is_u64(num_after(c.out, "{\"device\":1,", "reserved"), 12 * MiB,
           "device 1 reserved: plain 5 + VMM 4 + its pools 2 + 1 MiB; the peer mapping not counted again");
    is_u64(num_after(c.out, "{\"device\":0,", "process_used"), 303 * MiB, "device 0: the fake NVML's figure for it");
    is_u64(num_after(c.out, "{\"device\":1,", "process_used"), 312 * MiB, "device 1: its own NVML figure");
    ok(dev0 && dev1 && dev0 < dev1, "report --json lists both devices");
    run_free(&c);
    snprintf(path, sizeof path, "%s/vramtrace.%ld.2.dump", r.dir, r.pid);
    const char *targs[] = {"report", path, NULL};
    run_prog(&c, "../vramtrace", targs, NULL, 0);
    const char *d1 = strstr(c.out, "\ndevice 1\n");
    ok(d1 && strstr(d1, "  libraries     NCCL 8.0 MiB (taken for themselves"),
       "NCCL's communicator on device 1 (6 MiB of VMM buffers, 2 MiB for its proxy) in one line");
    ok(d1 && strstr(d1, "  reserved      20.0 MiB\n"), "device 1 reserved grew by NCCL's 8 MiB, the mapping not counted");
    const char *d0 = strstr(c.out, "\ndevice 0\n");
    ok(d0 && d1 && d0 < d1 && !memmem(d0, (size_t)(d1 - d0), "libraries", 9), "and nothing of NCCL on device 0");
    run_free(&c);
    free_dumps(d, n);
    run_free(&r);
}

/* Allocations live and freed while they wait in their thread's batch (lib/table/vt_pending.h): the
 * dumps hold exactly the live ones, whichever thread frees and whether a batch was full, folded by a
 * dump, by a free from another thread, or at its thread's end. */
static void test_batches(void)
{
    struct run r;
    struct vt_dumpfile d[4];
    const char *args[] = {"batch", NULL};
    char buf[32];
    run_prog(&r, "prog_driver", args, NULL, 1);
    size_t n = load_dumps(&r, d, 4);
    if (!ok(r.status == 0 && n == 3, "batch: two API dumps and the exit dump")) {
        diag("status %d, %zu dumps; stderr: %s", r.status, n, r.err);
        free_dumps(d, n);
        run_free(&r);
        return;
    }
    ok(out_value(&r, "freehost-async", buf, sizeof buf) && strcmp(buf, "0"), "cuMemFreeHost of an async pointer failed");
    size_t even = 0, odd = 0, bad = 0;
    for (size_t i = 0; i < d[0].nallocs; i++) {
        const struct vt_df_alloc *a = &d[0].allocs[i];
        if (a->size >= 1024 && a->size < 1624) {
            even += (a->size - 1024) % 2 == 0;
            odd += (a->size - 1024) % 2 == 1;
            bad += a->size == 1024 + 598;
        }
    }
    is_u64(even, 299, "the 300 kept, but the one cuMemFree freed");
    is_u64(odd + bad, 0, "none of those freed in their batch, nor the cuMemFree'd one");
    ok(find_alloc(&d[0], 1024 + 596) != NULL, "the one whose free failed is kept");
    is_u64(count_allocs(&d[0], "async", NULL, 7777), 4, "the thread's 8 less the 4 the main thread freed from its batch");
    is_u64(vt_df_counter(&d[0], "unknown_frees"), 0, "no free unknown");
    ok(vt_df_counter(&d[0], "batch_freed") >= 301, "freed in their batch: the 300 odd ones and more (%llu)",
       (unsigned long long)vt_df_counter(&d[0], "batch_freed"));
    is_u64(count_allocs(&d[1], "async", NULL, 8888), 2, "the ended thread's batch entered the table at its end");
    is_u64(count_allocs(&d[1], "async", NULL, 7777), 4, "its 4 others still there");
    is_u64(d[1].nallocs, 299 + 4 + 2, "nothing else");
    for (int k = 0; k < 2; k++) {
        uint64_t allocs = 0, frees = 0;
        for (size_t j = 0; j < d[k].napis; j++) {
            allocs += d[k].apis[j].allocs;
            frees += d[k].apis[j].frees;
        }
        ok(allocs - frees == d[k].nallocs, "dump %d: allocations - frees = live entries (%llu - %llu, %zu)", k + 1,
           (unsigned long long)allocs, (unsigned long long)frees, d[k].nallocs);
    }
    free_dumps(d, n);
    run_free(&r);
}

/* Entries put in the allocating thread's own shard of the table are found by a free from another
 * thread, and an address handed out again to another thread after a free we did not see replaces the
 * stale entry (vt_table.c's hint). */
static void test_cross_thread(void)
{
    struct run r;
    struct vt_dumpfile d[4];
    const char *args[] = {"xthread", NULL};
    run_prog(&r, "prog_driver", args, NULL, 1);
    size_t n = load_dumps(&r, d, 4);
    char a[64], b[64];
    if (!ok(r.status == 0 && n == 3 && out_value(&r, "unseen", a, sizeof a), "xthread: two API dumps and the exit dump")) {
        diag("status %d, %zu dumps; stderr: %s", r.status, n, r.err);
        free_dumps(d, n);
        run_free(&r);
        return;
    }
    const char *again = strstr(r.out, "again ");
    snprintf(b, sizeof b, "%s", again ? again + 6 : "");
    b[strcspn(b, "\n")] = 0;
    a[strcspn(a, " ")] = 0;
    is_str(b, a, "the pool handed the unseen-freed address to the main thread");
    is_u64(count_allocs(&d[0], "device", "cuMemAlloc_v2", 4096), 64, "64 allocations of the thread");
    is_u64(count_allocs(&d[0], "async", NULL, 5120), 1, "its stream-ordered one, freed unseen, still held");
    /* 256 KiB in small allocations stays in the thread's shard, short of the shared total: still counted. */
    is_u64(d[0].devices[0].reserved, 64 * 4096, "reserved: the thread's 64 allocations, not yet in the shared total");
    is_u64(d[0].devices[0].reserved_peak, 64 * 4096, "peak: exact, one thread allocating");
    is_u64(count_allocs(&d[1], "device", NULL, 0), 0, "all 64 freed by the main thread");
    is_u64(d[1].devices[0].reserved, 0, "reserved back to 0 after frees from another thread");
    is_u64(d[1].devices[0].reserved_peak, 64 * 4096, "peak remembered");
    is_u64(vt_df_counter(&d[1], "unknown_frees"), 0, "none of those frees unknown");
    is_u64(count_allocs(&d[1], "async", NULL, 5120), 1, "the address again: one entry, not two");
    is_u64(vt_df_counter(&d[1], "replaced"), 1, "the stale one counted replaced");
    const struct vt_df_alloc *e = d[1].nallocs == 1 ? &d[1].allocs[0] : NULL;
    ok(e && e->tid != d[0].allocs[0].tid, "the entry left is the main thread's");
    uint64_t allocs = 0, frees = 0;
    for (size_t j = 0; j < d[1].napis; j++) {
        allocs += d[1].apis[j].allocs;
        frees += d[1].apis[j].frees;
    }
    is_u64(allocs - frees, d[1].nallocs, "allocations - frees = live entries");
    /* What vramtrace cost: every 61st hook call of each thread timed (lib/core/vt_selfcost.h). */
    uint64_t calls = 0;
    for (size_t j = 0; j < d[1].napis; j++)
        calls += d[1].apis[j].calls;
    uint64_t samples = vt_df_counter(&d[1], "self_hook_samples");
    ok(samples >= calls / 61 - 1 && samples <= calls / 61 + 2, "self cost: every 61st call timed (%llu of %llu)",
       (unsigned long long)samples, (unsigned long long)calls);
    ok(vt_df_counter(&d[1], "self_hook_ns") > 0 && vt_df_counter(&d[1], "self_threads_ns") > 0,
       "self cost: time in hooks and in the dumper thread");
    ok(vt_df_counter(&d[1], "process_cpu_ns") >= vt_df_counter(&d[1], "self_threads_ns"),
       "self cost: the process's CPU holds its threads'");
    free_dumps(d, n);
    run_free(&r);
}

/* A pool's declared segment: the declaration is refused inside an allocation, taken at its start, and
 * the dump names it as the pool's: reserved, not memory the program holds. */
static void test_pool_segment(void)
{
    struct run r, c;
    struct vt_dumpfile d[2];
    const char *args[] = {"poolseg", NULL};
    run_prog(&r, "prog_driver", args, NULL, 1);
    size_t n = load_dumps(&r, d, 2);
    const char *line = strstr(r.out, "inside ");
    int inside = 0, start = 0;
    unsigned long long seg = 0;
    ok(r.status == 0 && n >= 1 && line && sscanf(line, "inside %d start %d seg 0x%llx", &inside, &start, &seg) == 3,
       "poolseg: ran, dumped");
    ok(inside == -1 && start == 0, "vramtrace_pool_segment: -1 inside an allocation, 0 at its start");
    if (n >= 1) {
        is_u64(d[0].npool_segments, 1, "the dump has one pool_segment record");
        ok(d[0].npool_segments == 1 && d[0].pool_segments[0].addr == seg &&
               !strcmp(d[0].pool_segments[0].allocator, "mypool"),
           "it names the allocation and the pool");
        char path[700];
        snprintf(path, sizeof path, "%s/vramtrace.%ld.1.dump", r.dir, r.pid);
        const char *cargs[] = {"report", path, "--json", NULL};
        run_prog(&c, "../vramtrace", cargs, NULL, 0);
        ok(strstr(c.out, "\"name\":\"mypool\",\"backend\":\"blocks\",\"reserved\":4194304,\"allocated\":0") != NULL,
           "report: mypool's view, 4 MiB reserved, nothing allocated");
        ok(strstr(c.out, "\"reserved\":4194304,\"allocated\":0,") != NULL, "device allocated 0: the segment is cache");
        run_free(&c);
    }
    free_dumps(d, n);
    run_free(&r);
}

/* CUDA arrays: device memory, sized by the driver's requirement query, keyed by handle; host memory the
 * program registers: its own kind, not device memory. */
static void test_arrays(void)
{
    struct run r, c;
    struct vt_dumpfile d[3];
    const char *args[] = {"arrays", NULL};
    run_prog(&r, "prog_driver", args, NULL, 1);
    size_t n = load_dumps(&r, d, 3);
    unsigned long long s2 = 0, s3 = 0, sm = 0;
    const char *line = strstr(r.out, "arrays ");
    if (!ok(r.status == 0 && n == 3 && line && sscanf(line, "arrays %llu %llu %llu", &s2, &s3, &sm) == 3,
            "arrays: two API dumps and the exit dump")) {
        diag("status %d, %zu dumps; out: %s; err: %s", r.status, n, r.out, r.err);
        free_dumps(d, n);
        run_free(&r);
        return;
    }
    is_u64(count_allocs(&d[0], "array", "cuArrayCreate_v2", s2), 1, "2D array: its bytes as the driver gives them");
    is_u64(count_allocs(&d[0], "array", "cuArray3DCreate_v2", s3), 1, "3D array");
    is_u64(count_allocs(&d[0], "array", "cuMipmappedArrayCreate", sm), 1, "mipmapped array");
    is_u64(count_allocs(&d[0], "host_registered", "cuMemHostRegister_v2", 3 * MiB), 1, "registered host memory, its own kind");
    const struct vt_df_alloc *a = find_alloc(&d[0], s2);
    ok(a && a->device == 0 && stack_has(&d[0], a->stack, "arrays_alloc"), "an array: device 0, stack arrays_alloc");
    is_u64(d[0].devices[0].reserved, s2 + s3 + sm, "device reserved: the arrays, not the registered host memory");
    char path[700];
    snprintf(path, sizeof path, "%s/vramtrace.%ld.1.dump", r.dir, r.pid);
    const char *cargs[] = {"report", path, "--json", NULL};
    run_prog(&c, "../vramtrace", cargs, NULL, 0);
    char want[96];
    snprintf(want, sizeof want, "\"reserved\":%llu,\"allocated\":%llu,", s2 + s3 + sm, s2 + s3 + sm);
    ok(strstr(c.out, want) && strstr(c.out, "\"host_registered\":3145728,"),
       "report --json: the arrays reserved and allocated, 3 MiB registered");
    run_free(&c);
    is_u64(d[1].nallocs, 0, "all destroyed and unregistered");
    is_u64(vt_df_counter(&d[1], "unknown_frees"), 0, "none of those unknown");
    free_dumps(d, n);
    run_free(&r);
}

/* Other owners' memory mapped here (IPC, pool imports, external memory): shown, never this process's
 * reserved or allocated; its frees found. */
static void test_imports(void)
{
    struct run r, c;
    struct vt_dumpfile d[3];
    const char *args[] = {"imports", NULL};
    run_prog(&r, "prog_driver", args, NULL, 1);
    size_t n = load_dumps(&r, d, 3);
    if (!ok(r.status == 0 && n == 3, "imports: two API dumps and the exit dump")) {
        diag("status %d, %zu dumps; out: %s; err: %s", r.status, n, r.out, r.err);
        free_dumps(d, n);
        run_free(&r);
        return;
    }
    is_u64(count_allocs(&d[0], "imported", "cuIpcOpenMemHandle_v2", 6 * MiB), 1, "IPC import: 6 MiB, its size from the driver");
    is_u64(count_allocs(&d[0], "imported", "cuMemPoolImportPointer", 5 * MiB), 1, "pool import: 5 MiB");
    is_u64(count_allocs(&d[0], "external", "cuImportExternalMemory", 8 * MiB), 1, "external memory object: 8 MiB");
    is_u64(count_allocs(&d[0], "imported", "cuExternalMemoryGetMappedBuffer", 2 * MiB), 1, "its mapped buffer: 2 MiB");
    is_u64(d[0].devices[0].reserved, 0, "device reserved: none of it (the exporters' own allocations were freed)");
    char path[700];
    snprintf(path, sizeof path, "%s/vramtrace.%ld.1.dump", r.dir, r.pid);
    const char *cargs[] = {"report", path, "--json", NULL};
    run_prog(&c, "../vramtrace", cargs, NULL, 0);
    ok(strstr(c.out, "\"reserved\":0,\"allocated\":0,") && strstr(c.out, "\"imported\":13631488,\"external\":8388608,") &&
           strstr(c.out, "\"class\":\"imported\""),
       "report --json: nothing reserved or allocated; imported 13 MiB, external 8 MiB; sites classed imported");
    run_free(&c);
    is_u64(d[1].nallocs, 0, "all given back");
    is_u64(vt_df_counter(&d[1], "unknown_frees"), 0, "none of those frees unknown");
    is_u64(vt_df_counter(&d[1], "unwatched_lookups"), vt_df_counter(&d[0], "unwatched_lookups"), "no unwatched lookups added");
    free_dumps(d, n);
    run_free(&r);
}

/* CUDA graphs' allocation nodes: live from a launch until freed, named by the call that built the node. */
static void test_graph_memory(void)
{
    struct run r;
    struct vt_dumpfile d[4];
    const char *args[] = {"graphmem", NULL};
    run_prog(&r, "prog_driver", args, NULL, 1);
    size_t n = load_dumps(&r, d, 4);
    if (!ok(r.status == 0 && n == 4, "graphmem: three API dumps and the exit dump")) {
        diag("status %d, %zu dumps; out: %s; err: %s", r.status, n, r.out, r.err);
        free_dumps(d, n);
        run_free(&r);
        return;
    }
    is_u64(count_allocs(&d[0], "graph", NULL, 0), 0, "built, not launched: no graph memory");
    is_u64(count_allocs(&d[1], "graph", "cuGraphAddMemAllocNode", 6 * MiB), 1,
           "launched: the node that its graph does not free, 6 MiB, past the graph's destruction");
    is_u64(count_allocs(&d[1], "graph", NULL, 0), 1, "the graph that frees its own allocation leaves none");
    const struct vt_df_alloc *a = find_alloc(&d[1], 6 * MiB);
    ok(a && a->device == 0 && stack_has(&d[1], a->stack, "graph_build"), "named by the call that built the node");
    is_u64(count_allocs(&d[2], "graph", NULL, 0), 0, "cuMemFreeAsync frees it");
    is_u64(vt_df_counter(&d[2], "unknown_frees"), 0, "that free is no unknown pointer");
    free_dumps(d, n);
    run_free(&r);
}

/* Memory nodes through the generic cuGraphAddNode, one in a child graph moved into its parent. */
static void test_graph_generic(void)
{
    struct run r;
    struct vt_dumpfile d[4];
    const char *args[] = {"graphnode", NULL};
    run_prog(&r, "prog_driver", args, NULL, 1);
    size_t n = load_dumps(&r, d, 4);
    if (!ok(r.status == 0 && n == 4, "graphnode: three API dumps and the exit dump")) {
        diag("status %d, %zu dumps; out: %s; err: %s", r.status, n, r.out, r.err);
        free_dumps(d, n);
        run_free(&r);
        return;
    }
    is_u64(count_allocs(&d[0], "graph", NULL, 0), 0, "built with cuGraphAddNode, not launched: nothing");
    is_u64(count_allocs(&d[1], "graph", NULL, 5 * MiB), 1, "launched: the parent's own allocation node");
    is_u64(count_allocs(&d[1], "graph", NULL, 3 * MiB), 1, "and the one of the child graph moved into it");
    const struct vt_df_alloc *a = find_alloc(&d[1], 3 * MiB);
    ok(a && stack_has(&d[1], a->stack, "graphnode_build"), "named by the call that built the node");
    is_u64(count_allocs(&d[2], "graph", NULL, 0), 1, "a generic free node of another graph frees the 5 MiB");
    is_u64(count_allocs(&d[3], "graph", NULL, 0), 0, "and the stream frees the rest");
    is_u64(vt_df_counter(&d[3], "unknown_frees"), 0, "no unknown frees");
    free_dumps(d, n);
    run_free(&r);
}

/* Stream capture: captured stream-ordered calls are graph nodes, live from a launch. */
static void test_capture(void)
{
    struct run r;
    struct vt_dumpfile d[4];
    const char *args[] = {"capture", NULL};
    run_prog(&r, "prog_driver", args, NULL, 1);
    size_t n = load_dumps(&r, d, 4);
    if (!ok(r.status == 0 && n == 4, "capture: three API dumps and the exit dump")) {
        diag("status %d, %zu dumps; out: %s; err: %s", r.status, n, r.out, r.err);
        free_dumps(d, n);
        run_free(&r);
        return;
    }
    is_u64(d[0].nallocs, 0, "captured, not launched: nothing live (no stream-ordered entry either)");
    is_u64(count_allocs(&d[1], "graph", NULL, 2 * MiB), 1, "launched: the allocation the graph keeps, 2 MiB");
    is_u64(d[1].nallocs, 1, "the one freed inside the graph is not live");
    const struct vt_df_alloc *a = d[1].nallocs ? &d[1].allocs[0] : NULL;
    ok(a && stack_has(&d[1], a->stack, "capture_build"), "named by the captured call's stack");
    is_u64(d[2].nallocs, 0, "freed after the launch");
    is_u64(vt_df_counter(&d[2], "unknown_frees"), 0, "no unknown frees");
    free_dumps(d, n);
    run_free(&r);
}

/* The same through the runtime: the shared one's stream-ordered hooks record the call themselves (the
 * driver hooks under them pass it through), the static one's calls are seen by the driver hooks. */
static void test_capture_runtime(const char *prog)
{
    struct run r;
    struct vt_dumpfile d[4];
    char name[160];
#define VT_NAMED(what) (snprintf(name, sizeof name, "%s: %s", prog, what), name)
    const char *args[] = {"capture", NULL};
    run_prog(&r, prog, args, NULL, 1);
    size_t n = load_dumps(&r, d, 4);
    if (!ok(r.status == 0 && n == 4, "%s capture: three API dumps and the exit dump", prog)) {
        diag("status %d, %zu dumps; out: %s; err: %s", r.status, n, r.out, r.err);
        free_dumps(d, n);
        run_free(&r);
        return;
    }
    is_u64(d[0].nallocs, 0, VT_NAMED("captured, not launched: nothing live"));
    is_u64(count_allocs(&d[1], "graph", NULL, 2 * MiB), 1, VT_NAMED("launched: the allocation the graph keeps"));
    is_u64(d[1].nallocs, 1, VT_NAMED("the one freed inside the graph is not live"));
    const struct vt_df_alloc *a = d[1].nallocs ? &d[1].allocs[0] : NULL;
    ok(a && stack_has(&d[1], a->stack, "rt_capture_build"), "%s: named by the captured call's stack", prog);
    is_u64(d[2].nallocs, 0, VT_NAMED("freed after the launch"));
    is_u64(vt_df_counter(&d[2], "unknown_frees"), 0, VT_NAMED("no unknown frees"));
    free_dumps(d, n);
    run_free(&r);
#undef VT_NAMED
}

/* A dump while a CUDA graph is being captured in the global mode: asking the driver about a context from
 * another thread would invalidate the capture (the fake driver does as the real one), so the dump asks
 * nothing of a context, says so, and the capture ends well; the next dump asks as usual. */
static void test_capture_dump(void)
{
    struct run r;
    struct vt_dumpfile d[4];
    const char *args[] = {"capdump", NULL};
    run_prog(&r, "prog_driver", args, NULL, 1);
    size_t n = load_dumps(&r, d, 4);
    if (!ok(r.status == 0 && n == 3, "capdump: two API dumps and the exit dump")) {
        diag("status %d, %zu dumps; out: %s; err: %s", r.status, n, r.out, r.err);
        free_dumps(d, n);
        run_free(&r);
        return;
    }
    ok(strstr(r.out, "end-capture 0\n") != NULL, "the capture ends well: the dump broke nothing (%s)", r.out);
    ok(vt_df_counter(&d[0], "capturing") == 1 && d[0].ndevices == 1 && d[0].devices[0].free == VT_DF_UNKNOWN &&
           d[0].devices[0].reserved == 3 * MiB,
       "the dump during it: capturing 1, free memory not asked (unknown), reserved from the table (3 MiB)");
    ok(vt_df_counter(&d[1], "capturing") == 0 && d[1].ndevices == 1 && d[1].devices[0].free != VT_DF_UNKNOWN,
       "the dump after it: the driver asked as usual");
    free_dumps(d, n);
    run_free(&r);
}

int main(void)
{
    test_cross_thread();
    test_batches();
    test_two_devices();
    test_vmm();
    test_pool();
    test_kinds();
    test_pool_segment();
    test_arrays();
    test_imports();
    test_graph_memory();
    test_graph_generic();
    test_capture();
    test_capture_dump();
    test_capture_runtime("prog_rt_shared");
    test_capture_runtime("prog_rt_static");
    return tap_done();
}
