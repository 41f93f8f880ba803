/* The live allocation table: every tracked allocation keyed by address (and address space),
 * VMM physical handles keyed by handle, explicit pools, and the counters; entries in 16 shards by
 * address, each under a lock of its own, the rest under one more (lib/table/vt_table.c). */
#ifndef VT_TABLE_H
#define VT_TABLE_H

#include "vt_format.h"

#include <stddef.h>
#include <stdint.h>

#include "vt_clock.h" /* vt_now_ns and vt_ticks, which the table's users stamp and time with */
#include "vt_fns.h"
#include "vt_peak.h"

#define VT_MAX_DEVICES 64
#define VT_MAX_UNWATCHED 64



/* One tracked allocation: 64 bytes (what only some kinds need shares one place). */
struct vt_alloc {
    uint64_t addr;
    uint64_t size;
    uint64_t seq;     /* unique in the process, grows within a shard (vt_table.c) */
    uint64_t stamp;   /* vt_ticks() when it was made: vt_ticks_ns() gives its time */
    union {
        struct {
            uint64_t stream;
            uint64_t pool;   /* the pool it came from, 0 for the device's current pool */
        } async;             /* VT_KIND_ASYNC */
        struct {
            uint64_t handle; /* the physical handle mapped */
            uint64_t offset; /* into the handle */
        } map;               /* VT_KIND_VMM_MAP */
        uint64_t owner;      /* VT_KIND_BLOCK: its allocator (vt_block_owner); VT_KIND_DEVICE: the native
                                allocator whose segment it is, 0 for none (vt_table_set_owner) */
    } x;
    uint32_t stack;
    int32_t tid;
    int16_t device;   /* -1 when not known (yet) */
    uint8_t kind;
    uint8_t api;      /* enum vt_fn */
    uint8_t space;    /* with addr, the key: a VA reservation and its first mapping share an address */
};
_Static_assert(sizeof(struct vt_alloc) <= 64, "a tracked allocation fits in 64 bytes");
_Static_assert(VT_FN_COUNT <= 256 && VT_KIND_COUNT < 255, "api and kind fit in a byte");

struct vt_phys {
    uint64_t handle;
    uint64_t size;
    uint64_t seq;
    uint64_t stamp; /* as vt_alloc's */
    uint32_t stack;
    int32_t device; /* location id: device ordinal, or NUMA node for host locations */
    int32_t tid;
    int32_t refs;   /* cuMemCreate and each retain add one, each release takes one */
    int32_t maps;   /* live mappings */
    uint16_t kind;  /* VT_KIND_PHYS or VT_KIND_PHYS_HOST */
    uint16_t api;
};

struct vt_pool {
    uint64_t handle;
    int32_t device;
};

struct vt_api_counters {
    uint64_t calls, allocs, frees, bytes_alloc, bytes_freed, failed;
};

struct vt_kind_counters {
    uint64_t allocs, frees, bytes_alloc, bytes_freed;
};

/* A request that failed for lack of memory: the same request (API, size, device, call site) failing
 * again adds to its count. The newest VT_MAX_FAILED distinct ones are kept for the process's life, so
 * every later dump, the exit dump included, still shows what the program asked for and could not get. */
#define VT_MAX_FAILED 32
struct vt_failed {
    uint64_t size, seq;         /* seq: of the first failure */
    uint64_t first_ns, last_ns; /* monotonic */
    uint64_t count;
    uint64_t free_then;         /* the device's free memory right after the first failure; UINT64_MAX: unknown */
    uint32_t stack;
    int32_t device;
    int32_t result;
    uint16_t api;
};


struct vt_unwatched {
    char name[48];
    uint64_t count;
};

struct vt_counters {
    struct vt_api_counters api[VT_FN_COUNT];
    struct vt_kind_counters kind[VT_KIND_COUNT];
    uint64_t live_count[VT_KIND_COUNT], live_bytes[VT_KIND_COUNT];
    uint64_t reserved[VT_MAX_DEVICES], reserved_peak[VT_MAX_DEVICES];
    int64_t reserved_rest[VT_MAX_DEVICES]; /* the table's own: bytes not yet in the shared total */
    int32_t max_device; /* highest device ordinal seen, -1 for none */
    uint64_t unknown_frees, unwatched_lookups, dropped, replaced, oom_events;
    uint64_t batch_freed; /* allocations freed while still in their thread's batch (vt_pending.h) */
    uint64_t snap_hold_ns; /* the longest a lock of the table was held in one go by this snapshot */
    uint64_t seq;
};

/* A consistent copy of the whole state (the table at one moment), used without any lock. */
struct vt_snapshot {
    struct vt_alloc *allocs;
    size_t nallocs;
    struct vt_phys *phys;
    size_t nphys;
    struct vt_pool *pools;
    size_t npools;
    struct vt_unwatched unwatched[VT_MAX_UNWATCHED];
    size_t nunwatched;
    struct vt_counters c;
    struct vt_failed failed[VT_MAX_FAILED]; /* newest first */
    size_t nfailed;
    /* Each device's peak (c.reserved_peak): the stamp of the entry that made it (0: none yet; UINT64_MAX:
     * the snapshot found reserved past it, so the peak is now), and the bytes freed since from entries
     * made before it, by site (vt_peak.h); peak_lost: not all of those could be kept. */
    uint64_t peak_stamp[VT_MAX_DEVICES];
    struct vt_peak_freed *peak_freed;
    size_t npeak_freed;
    int peak_lost;
};

/* Marks the device allocation that starts at addr as native allocator owner's segment (a vt_block_owner
 * index), for as long as it lives; an allocation already marked keeps its owner. sweep: look in every
 * shard when the address's hint does not lead to it (else a miss is taken as none). Returns 1 when there
 * is such an allocation. */
int vt_table_set_owner(uint64_t addr, uint64_t owner, int sweep);

/* Allocations. add fills seq/time/tid and counts it; remove takes an entry out and counts the free
 * in the same step (so every snapshot has live entries = allocations - frees); restore puts it back
 * and uncounts the free when the real free failed. */
void vt_table_add(struct vt_alloc *a);
int vt_table_remove(uint64_t addr, enum vt_kind kind_space, struct vt_alloc *out);
/* remove for a free that may have to restore the entry: *taken is where the entry is to be read then,
 * either copy (taken out of the table, whose slot is reused at once) or its place in the calling thread's
 * own batch, left as it is until the thread allocates again (vt_pending_take): a free reads the entry
 * only when the real free fails. */
int vt_table_take(uint64_t addr, enum vt_kind kind_space, struct vt_alloc *copy, const struct vt_alloc **taken);
/* The first lines a vt_table_remove of addr, or a vt_table_add of it, will read (in the calling thread's
 * batch), asked for at once without waiting: the hook's other work before it then covers the wait. */
void vt_table_prefetch(uint64_t addr, enum vt_kind kind_space);
void vt_table_restore(const struct vt_alloc *a) __attribute__((cold));
/* Removes every mapping inside [addr, addr+size); returns how many were copied to out (at most max)
 * and sets *total to how many were removed. */
size_t vt_table_remove_maps(uint64_t addr, uint64_t size, struct vt_alloc *out, size_t max, size_t *total);

/* Physical handles. adjust applies reference/mapping deltas before the real call: it returns -1 for
 * an unknown handle, 0 when the handle lives on, 1 when it died (copied to *dead, its free counted).
 * When the real call failed, undo reverses the deltas (reviving *dead and uncounting its free). */
void vt_phys_add(struct vt_phys *p);
int vt_phys_adjust(uint64_t handle, int delta_refs, int delta_maps, struct vt_phys *dead);
void vt_phys_undo(uint64_t handle, int delta_refs, int delta_maps, const struct vt_phys *dead);

void vt_pool_add(uint64_t handle, int device);
void vt_pool_remove(uint64_t handle);
int vt_pool_device(uint64_t handle);

/* Counting what did not change the table. */
void vt_count_call(enum vt_fn api);
void vt_count_failure(enum vt_fn api) __attribute__((cold));
void vt_count_unknown_free(void) __attribute__((cold));
void vt_count_unwatched(const char *name);
void vt_count_dropped(void);
void vt_record_oom(enum vt_fn api, uint64_t size, int device, uint32_t stack, int result, uint64_t free_then)
    __attribute__((cold));

/* For vt_pending.c: a thread's batch of new entries (stamped, with their space) enters the table, in the
 * shard of stripe: each is counted allocated, and those flagged freed or replaced are counted freed too
 * and left out. */
enum { VT_PEND_LIVE, VT_PEND_FREED, VT_PEND_REPLACED };
void vt_table_fold(unsigned stripe, const struct vt_alloc *e, const uint8_t *flags, size_t n) __attribute__((cold));

int vt_table_snapshot(struct vt_snapshot *s);
void vt_snapshot_free(struct vt_snapshot *s);


#endif
