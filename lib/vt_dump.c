/* The dump writer. Everything is copied from the table first; the file is then written with no lock
 * held, into a 0600 temporary file created O_EXCL|O_NOFOLLOW beside its final name, and linked into
 * place only when complete, so a reader never sees half a dump. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "vramtrace.h"
#include "vt_blocks.h"
#include "vt_config.h"
#include "vt_devices.h"
#include "vt_dump.h"
#include "vt_log.h"
#include "vt_modules.h"
#include "vt_pycapture.h"
#include "vt_pystack.h"
#include "vt_stack.h"
#include "vt_table.h"

static const char *const vt_reason_names[] = {"signal", "exit", "oom", "interval", "api"};
static uint64_t vt_start_mono, vt_start_wall;
static unsigned long vt_dump_seq;

static uint64_t vt_wall_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void vt_dump_init(void)
{
    vt_start_mono = vt_now_ns();
    vt_start_wall = vt_wall_ns();
}

void vt_dump_atfork_child(void)
{
    vt_dump_seq = 0;
    vt_dump_init();
}

static const char *vt_dump_dir(void)
{
    if (vt_cfg.dir[0])
        return vt_cfg.dir;
    return access(".", W_OK) == 0 ? "." : "/tmp";
}

static void vt_put_u64(FILE *f, uint64_t v)
{
    if (v == VT_UNKNOWN)
        fputs(" -", f);
    else
        fprintf(f, " %llu", (unsigned long long)v);
}

static int vt_cmp_pc(const void *a, const void *b)
{
    uintptr_t x = *(const uintptr_t *)a, y = *(const uintptr_t *)b;
    return x < y ? -1 : x > y;
}

/* The highest id of the records "<prefix> ID ..." in text (the bridges' pyframes and pystacks). */
static uint32_t vt_max_id(const char *text, const char *prefix)
{
    uint32_t max = 0;
    size_t len = strlen(prefix);
    for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
        if (!strncmp(p, prefix, len)) {
            unsigned long v = strtoul(p + len, NULL, 10);
            if (v > max && v < UINT32_MAX / 2)
                max = (uint32_t)v;
        }
    return max;
}

/* Stacks referenced by live entries (or the last OOM), their frames' dladdr names, and their Python
 * stacks, numbered after the bridges' own. */
static void vt_write_stacks(FILE *f, const struct vt_snapshot *s, const char *bridge)
{
    uint32_t count;
    const struct vt_stack *head = vt_stack_all(&count);
    if (!count)
        return;
    /* Read after the native stacks: every Python stack they refer to is older. */
    uint32_t pycount = vt_pystack_count();
    unsigned char *used = calloc(count + 1, 1), *pyused = calloc((size_t)pycount + 1, 1);
    if (!used || !pyused) {
        free(used);
        free(pyused);
        vt_say_once(VT_ONCE_NOMEM, "out of memory while writing a dump; its stacks are left out");
        return;
    }
    for (size_t i = 0; i < s->nallocs; i++)
        if (s->allocs[i].stack <= count)
            used[s->allocs[i].stack] = 1;
    for (size_t i = 0; i < s->nphys; i++)
        if (s->phys[i].stack <= count)
            used[s->phys[i].stack] = 1;
    if (s->c.oom_events && s->oom.stack <= count)
        used[s->oom.stack] = 1;
    used[0] = 0;

    uint32_t frame_base = vt_max_id(bridge, "pyframe "), stack_base = vt_max_id(bridge, "pystack ");
    size_t npc = 0;
    for (const struct vt_stack *st = head; st; st = st->next) {
        if (!used[st->id])
            continue;
        fprintf(f, "stack %u %u", st->id, st->n);
        for (uint32_t j = 0; j < st->n; j++)
            fprintf(f, " 0x%lx", (unsigned long)st->pc[j]);
        fprintf(f, " %u\n", st->py ? stack_base + st->py : 0);
        if (st->py <= pycount)
            pyused[st->py] = 1;
        npc += st->n;
    }
    vt_pystack_write(f, pyused, pycount, frame_base, stack_base);
    free(pyused);
    uintptr_t *pcs = malloc((npc ? npc : 1) * sizeof *pcs);
    if (pcs) {
        size_t k = 0;
        for (const struct vt_stack *st = head; st; st = st->next)
            if (used[st->id])
                for (uint32_t j = 0; j < st->n; j++)
                    pcs[k++] = st->pc[j];
        qsort(pcs, k, sizeof *pcs, vt_cmp_pc);
        for (size_t j = 0; j < k; j++) {
            if (j && pcs[j] == pcs[j - 1])
                continue;
            Dl_info di;
            /* A return address: the call is the byte before it. */
            if (dladdr((void *)(pcs[j] - 1), &di) && di.dli_sname && di.dli_saddr)
                fprintf(f, "frame 0x%lx %s+0x%lx\n", (unsigned long)pcs[j], di.dli_sname,
                        (unsigned long)(pcs[j] - (uintptr_t)di.dli_saddr));
            else
                fprintf(f, "frame 0x%lx -\n", (unsigned long)pcs[j]);
        }
        free(pcs);
    }
    free(used);
}

static void vt_write_body(FILE *f, enum vt_reason reason, unsigned long seq, struct vt_snapshot *s,
                          const char *bridge)
{
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    exe[n > 0 ? n : 0] = 0;

    fprintf(f, "vramtrace-dump %d\n", VRAMTRACE_FORMAT_VERSION);
    fprintf(f, "pid %ld\n", (long)getpid());
    fprintf(f, "ppid %ld\n", (long)getppid());
    fprintf(f, "exe %s\n", n > 0 ? exe : "-");
    fprintf(f, "reason %s\n", vt_reason_names[reason]);
    fprintf(f, "seq %lu\n", seq);
    fprintf(f, "time %llu %llu\n", (unsigned long long)vt_wall_ns(), (unsigned long long)vt_now_ns());
    fprintf(f, "start %llu %llu\n", (unsigned long long)vt_start_wall, (unsigned long long)vt_start_mono);
    fprintf(f, "depth %d\n", vt_cfg.depth);

    /* At exit the driver may already be torn down (it is finalized before a preloaded library):
     * the exit dump asks it nothing. */
    int ask_driver = reason != VT_REASON_EXIT;
    struct vt_devinfo devs[VT_MAX_DEVICES];
    int ndev = ask_driver ? vt_devices_query(devs, VT_MAX_DEVICES, s->c.max_device) : 0;
    for (int d = 0; d < ndev; d++) {
        fprintf(f, "device %d", devs[d].ordinal);
        vt_put_u64(f, devs[d].total);
        vt_put_u64(f, devs[d].free);
        fprintf(f, " %llu %llu", (unsigned long long)s->c.reserved[d], (unsigned long long)s->c.reserved_peak[d]);
        vt_put_u64(f, devs[d].process_used);
        vt_put_u64(f, devs[d].graph_reserved);
        vt_put_u64(f, devs[d].graph_used);
        fputc('\n', f);
    }
    struct vt_poolinfo pools[VT_MAX_DEVICES + 64];
    size_t npools = vt_pools_query(devs, ndev, s->pools, s->npools, pools, sizeof pools / sizeof pools[0]);
    for (size_t i = 0; i < npools; i++) {
        fprintf(f, "pool 0x%llx %d %s", (unsigned long long)pools[i].handle, pools[i].device,
                pools[i].is_default ? "default" : "explicit");
        vt_put_u64(f, pools[i].reserved);
        vt_put_u64(f, pools[i].used);
        vt_put_u64(f, pools[i].reserved_high);
        vt_put_u64(f, pools[i].used_high);
        if (pools[i].threshold_known)
            fprintf(f, " %llu\n", (unsigned long long)pools[i].threshold);
        else
            fputs(" -\n", f);
    }

    if (bridge)
        fputs(bridge, f);

    static const struct { const char *name; size_t off; } counters[] = {
        {"unknown_frees", offsetof(struct vt_counters, unknown_frees)},
        {"unwatched_lookups", offsetof(struct vt_counters, unwatched_lookups)},
        {"dropped", offsetof(struct vt_counters, dropped)},
        {"replaced", offsetof(struct vt_counters, replaced)},
        {"oom_events", offsetof(struct vt_counters, oom_events)},
        {"last_seq", offsetof(struct vt_counters, seq)},
    };
    for (size_t i = 0; i < sizeof counters / sizeof counters[0]; i++)
        fprintf(f, "counter %s %llu\n", counters[i].name,
                (unsigned long long)*(const uint64_t *)((const char *)&s->c + counters[i].off));
    for (int a = 0; a < VT_FN_COUNT; a++) {
        const struct vt_api_counters *ac = &s->c.api[a];
        if (!ac->calls && !ac->allocs && !ac->frees && !ac->failed)
            continue;
        fprintf(f, "api %s %llu %llu %llu %llu %llu %llu\n", vt_fn_name((enum vt_fn)a),
                (unsigned long long)ac->calls, (unsigned long long)ac->allocs, (unsigned long long)ac->frees,
                (unsigned long long)ac->bytes_alloc, (unsigned long long)ac->bytes_freed,
                (unsigned long long)ac->failed);
    }
    for (int k = 0; k < VT_KIND_COUNT; k++) {
        const struct vt_kind_counters *kc = &s->c.kind[k];
        fprintf(f, "kind %s %llu %llu %llu %llu %llu %llu\n", vt_kind_name((enum vt_kind)k),
                (unsigned long long)s->c.live_count[k], (unsigned long long)s->c.live_bytes[k],
                (unsigned long long)kc->allocs, (unsigned long long)kc->frees, (unsigned long long)kc->bytes_alloc,
                (unsigned long long)kc->bytes_freed);
    }
    vt_pycapture_write(f);
    for (size_t i = 0; i < s->nunwatched; i++)
        fprintf(f, "unwatched %s %llu\n", s->unwatched[i].name[0] ? s->unwatched[i].name : "-",
                (unsigned long long)s->unwatched[i].count);
    if (s->c.oom_events)
        fprintf(f, "oom %llu %s %llu %d %u %d %llu\n", (unsigned long long)s->oom.seq, vt_fn_name(s->oom.api),
                (unsigned long long)s->oom.size, s->oom.device, s->oom.stack, s->oom.result,
                (unsigned long long)s->oom.time_ns);

    vt_modules_write(f);
    vt_write_stacks(f, s, bridge);

    if (ask_driver)
        vt_devices_resolve(s->allocs, s->nallocs);
    for (size_t i = 0; i < s->nallocs; i++) {
        const struct vt_alloc *a = &s->allocs[i];
        /* A block's API field names its allocator; its handle field is not a handle. */
        int block = a->kind == VT_KIND_BLOCK;
        fprintf(f, "alloc 0x%llx %llu %s %s %d 0x%llx 0x%llx 0x%llx %llu %u %llu %llu %d\n",
                (unsigned long long)a->addr, (unsigned long long)a->size, vt_kind_name(a->kind),
                block ? vt_block_owner(a->handle) : vt_fn_name(a->api), a->device, (unsigned long long)a->stream,
                (unsigned long long)a->pool, block ? 0ull : (unsigned long long)a->handle, (unsigned long long)a->offset, a->stack,
                (unsigned long long)a->seq, (unsigned long long)a->time_ns, a->tid);
    }
    for (size_t i = 0; i < s->nphys; i++) {
        const struct vt_phys *p = &s->phys[i];
        fprintf(f, "phys 0x%llx %llu %s %s %d %d %d %u %llu %llu %d\n", (unsigned long long)p->handle,
                (unsigned long long)p->size, vt_kind_name(p->kind), vt_fn_name(p->api), p->device, p->refs,
                p->maps, p->stack, (unsigned long long)p->seq, (unsigned long long)p->time_ns, p->tid);
    }
    fputs("end\n", f);
}

int vt_dump_write(enum vt_reason reason, const char *bridge, struct vt_snapshot *given, char *path, size_t len)
{
    struct vt_snapshot s;
    if (given)
        s = *given;
    else if (vt_table_snapshot(&s) < 0) {
        vt_say_once(VT_ONCE_NOMEM, "out of memory: no dump written");
        return -1;
    }
    const char *dir = vt_dump_dir();
    char tmp[PATH_MAX + 64], final[PATH_MAX + 64];
    unsigned long seq = __atomic_add_fetch(&vt_dump_seq, 1, __ATOMIC_RELAXED);
    int fd = -1;
    if (snprintf(tmp, sizeof tmp, "%s/.vramtrace.%ld.%lu.dump.tmp", dir, (long)getpid(), seq) < (int)sizeof tmp)
        fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    else
        errno = ENAMETOOLONG;
    if (fd < 0) {
        vt_say_once(VT_ONCE_DIR, "cannot write dumps in %s: %s; the program runs on without them", dir,
                    strerror(errno));
        vt_snapshot_free(&s);
        return -1;
    }
    FILE *f = fdopen(fd, "w");
    if (!f) {
        close(fd);
        unlink(tmp);
        vt_snapshot_free(&s);
        vt_say_once(VT_ONCE_NOMEM, "out of memory: no dump written");
        return -1;
    }
    setvbuf(f, NULL, _IOFBF, 1 << 20);
    vt_write_body(f, reason, seq, &s, bridge);
    vt_snapshot_free(&s);
    int bad = ferror(f);
    if (fclose(f) != 0)
        bad = 1;
    /* link() refuses an existing name: a dump of an earlier process with our pid is never replaced. */
    int linked = -1;
    for (int tries = 0; !bad && tries < 1000; tries++) {
        if (snprintf(final, sizeof final, "%s/vramtrace.%ld.%lu.dump", dir, (long)getpid(), seq) >= (int)sizeof final) {
            errno = ENAMETOOLONG;
            break;
        }
        if ((linked = link(tmp, final)) == 0 || errno != EEXIST)
            break;
        seq = __atomic_add_fetch(&vt_dump_seq, 1, __ATOMIC_RELAXED);
    }
    int err = errno;
    unlink(tmp);
    if (bad || linked != 0) {
        vt_say_once(VT_ONCE_WRITE, "cannot write a dump in %s: %s", dir, bad ? "write failed (disk full?)" : strerror(err));
        return -1;
    }
    if (path && len) {
        strncpy(path, final, len - 1);
        path[len - 1] = 0;
    }
    return 0;
}
