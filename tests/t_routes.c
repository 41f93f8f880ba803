/* Every interception route: an allocation made through it is in the exit dump exactly once, with
 * its size, kind and API, and a stack that names the function that allocated it. */
#include <string.h>

#include "harness.h"

static void check_route(const char *prog, const char *mode, uint64_t size, const char *kind, const char *api,
                        const char *fn)
{
    struct run r;
    struct vt_dumpfile d[4];
    const char *args[] = {mode, NULL};
    if (!ok(run_prog(&r, prog, args, NULL, 1) == 0 && r.status == 0, "%s %s runs", prog, mode)) {
        diag("stderr: %s", r.err);
        return;
    }
    size_t n = load_dumps(&r, d, 4);
    if (ok(n == 1, "%s %s: one dump (the exit dump)", prog, mode)) {
        is_str(d[0].reason, "exit", "reason is exit");
        is_u64(count_allocs(&d[0], NULL, NULL, size), 1, "the allocation is there exactly once");
        const struct vt_df_alloc *a = find_alloc(&d[0], size);
        if (ok(a != NULL, "found by size")) {
            is_str(vt_kind_word(a->kind), kind, "kind");
            is_str(a->api, api, "api");
            ok(stack_has(&d[0], a->stack, fn), "stack names %s", fn);
            const struct vt_df_stack *st = vt_df_stack(&d[0], a->stack);
            const struct vt_df_module *self = NULL;
            for (size_t i = 0; i < d[0].nmodules; i++)
                if (strstr(d[0].modules[i].path, "/libvramtrace.so"))
                    self = &d[0].modules[i];
            int inside = 0;
            for (uint32_t i = 0; st && self && i < st->n; i++)
                inside |= st->pc[i] >= self->lo && st->pc[i] < self->hi;
            ok(st && self && !inside, "no frame of libvramtrace.so in the stack");
        }
    }
    free_dumps(d, n);
    run_free(&r);

    /* Two frames kept: both the program's, however many of our own the route has above them (a
     * capture asks for as many of ours as it has seen, and again for more when a route has more). */
    const char *env[] = {"VRAMTRACE_DEPTH=2", NULL};
    run_prog(&r, prog, args, env, 1);
    n = load_dumps(&r, d, 4);
    const struct vt_df_alloc *a = n == 1 ? find_alloc(&d[0], size) : NULL;
    const struct vt_df_stack *st = a ? vt_df_stack(&d[0], a->stack) : NULL;
    ok(st && st->n == 2, "%s %s, VRAMTRACE_DEPTH=2: two frames (%u)", prog, mode, st ? st->n : 0);
    free_dumps(d, n);
    run_free(&r);
}

int main(void)
{
    check_route("prog_driver", "direct", 1000003, "device", "cuMemAlloc_v2", "route_direct_alloc");
    check_route("prog_driver", "dlsym", 1000033, "device", "cuMemAlloc_v2", "route_dlsym_alloc");
    check_route("prog_driver", "gpa4", 1000037, "device", "cuMemAlloc_v2", "route_gpa4_alloc");
    check_route("prog_driver", "gpa5", 1000039, "async", "cuMemAllocAsync", "route_gpa5_alloc");
    check_route("prog_driver", "gpa5_ptsz", 1000081, "async", "cuMemAllocAsync_ptsz", "route_gpa5_ptsz_alloc");
    check_route("prog_driver", "gpa_self", 1000099, "device", "cuMemAlloc_v2", "route_gpa_self_alloc");
    /* Arrays and imports reach the driver through cuGetProcAddress too: the import (by its size here). */
    check_route("prog_driver", "gpa_others", 1000117, "imported", "cuIpcOpenMemHandle_v2", "route_gpa_others");
    /* Shared runtime: the driver call inside cudaMalloc is labelled, not counted again; the
     * allocation that was freed is gone, and its free counted once. */
    check_route("prog_rt_shared", "malloc", 2000003, "device", "cudaMalloc", "rt_alloc_fn");
    check_route("prog_rt_shared", "async", 2000029, "async", "cudaMallocAsync", "rt_async_fn");
    /* Static runtime: invisible to symbol interposition, caught at the driver. */
    check_route("prog_rt_static", "malloc", 2000003, "device", "cuMemAlloc_v2", "rt_alloc_fn");
    check_route("prog_rt_static", "async", 2000029, "async", "cuMemAllocAsync", "rt_async_fn");

    struct run r;
    struct vt_dumpfile d[2];
    const char *malloc_args[] = {"malloc", NULL};
    run_prog(&r, "prog_rt_shared", malloc_args, NULL, 1);
    if (ok(load_dumps(&r, d, 2) == 1, "shared runtime dump")) {
        const struct vt_df_api *a = vt_df_api(&d[0], "cudaMalloc");
        ok(a && a->allocs == 2 && a->frees == 1 && a->bytes_alloc == 2000003 + 3000017,
           "cudaMalloc counted once per call: 2 allocations, 1 free");
        ok(!vt_df_api(&d[0], "cuMemAlloc_v2"), "no second record under cuMemAlloc_v2");
        is_u64(count_allocs(&d[0], NULL, NULL, 3000017), 0, "the freed allocation is not live");
        free_dumps(d, 1);
    }
    run_free(&r);

    const char *legacy[] = {"legacy", NULL};
    run_prog(&r, "prog_driver", legacy, NULL, 1);
    if (ok(r.status == 0 && load_dumps(&r, d, 2) == 1, "legacy lookup passes through")) {
        int found = 0;
        for (size_t i = 0; i < d[0].nunwatched; i++)
            found |= !strcmp(d[0].unwatched[i].name, "cuMemAlloc") && d[0].unwatched[i].count == 1;
        ok(found, "the unwrapped pre-3.2 cuMemAlloc is counted as unwatched, by name");
        int trim = 0;
        for (size_t i = 0; i < d[0].nunwatched; i++)
            trim |= !strcmp(d[0].unwatched[i].name, "cuDeviceGraphMemTrim");
        ok(!trim, "cuDeviceGraphMemTrim is not named unwatched: nothing to watch (graph figures are read at dumps)");
        ok(vt_df_counter(&d[0], "unwatched_lookups") >= 1, "unwatched_lookups counter");
        free_dumps(d, 1);
    }
    run_free(&r);

    const char *next[] = {"rtldnext", NULL};
    char buf[64];
    run_prog(&r, "prog_driver", next, NULL, 1);
    is_str(out_value(&r, "next", buf, sizeof buf), "2", "dlsym(RTLD_NEXT) from another library finds the next one");
    is_str(out_value(&r, "missing", buf, sizeof buf), "null+error", "a failed lookup returns NULL with dlerror");
    is_str(out_value(&r, "missing-cu", buf, sizeof buf), "null+error", "a failed cu* lookup too");
    run_free(&r);
    return tap_done();
}
