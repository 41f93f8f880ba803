/* Per-device and per-pool figures asked of the driver through the real functions (vt_real.h): at dump
 * time from the dumper's thread, and a device's free memory when an allocation failed for want of it. */
#ifndef VT_DEVICES_H
#define VT_DEVICES_H

#include <stddef.h>
#include <stdint.h>

#include "vt_table.h"

#define VT_UNKNOWN UINT64_MAX

struct vt_devinfo {
    int ordinal;
    uint64_t total, free; /* VT_UNKNOWN when the driver could not say */
    uint64_t process_used; /* NVML's figure for this process, VT_UNKNOWN when not known */
    uint64_t graph_reserved, graph_used; /* memory of CUDA graphs' allocation nodes, VT_UNKNOWN when not read */
    /* What the context's limits let the driver set aside (VT_UNKNOWN when not read): the device malloc
     * heap, the stack of one thread and how many threads can be resident, the printf FIFO. */
    uint64_t malloc_heap, stack_per_thread, resident_threads, printf_fifo;
};

struct vt_poolinfo {
    uint64_t handle;
    int device;
    int is_default;
    uint64_t reserved, used, reserved_high, used_high; /* VT_UNKNOWN when not read */
    uint64_t threshold; /* may be UINT64_MAX (never release): see threshold_known */
    int threshold_known;
};

/* Devices 0..n-1 where n is the driver's count (or one past the highest device seen). live: 0 asks only
 * the device's size, nothing of a context (free memory, limits, graph memory, NVML are left unknown). */
int vt_devices_query(struct vt_devinfo *out, int max, int max_seen, int live);

/* Waits, at most VT_CAPTURE_WAIT_MS, for the CUDA graph captures under way to end; returns how many
 * still are. While a capture runs (torch.compile's CUDA graphs, torch.cuda.graph), a context call of
 * another thread can invalidate it (the global capture mode forbids "unsafe" calls process-wide), so a
 * dump then asks the driver nothing of a context, and says so. */
#define VT_CAPTURE_WAIT_MS 1000
int vt_devices_settle_captures(void);

/* The default pool of each device, then the explicit pools, with their attributes. */
size_t vt_pools_query(const struct vt_devinfo *devs, int ndev, const struct vt_pool *pools, size_t npools,
                      struct vt_poolinfo *out, size_t max);

/* The free memory of the calling thread's current context's device (*device set to it when it was
 * not known), right after a request failed there; VT_UNKNOWN when there is no context. */
uint64_t vt_devices_free_now(int *device);

/* Fills in the device of entries whose device was not known when they were made. */
void vt_devices_resolve(struct vt_alloc *allocs, size_t n);

#endif
