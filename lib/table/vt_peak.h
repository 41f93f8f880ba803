/* What was live at each device's last high-water mark of reserved memory, by call site: heaptrack's
 * "peak contributions", kept as the program runs (lib/table/vt_peak.c). */
#ifndef VT_PEAK_H
#define VT_PEAK_H

#include <stddef.h>
#include <stdint.h>

/* An entry of reserved memory, as the peak's accounting sees it. */
struct vt_peak_who {
    uint64_t stamp; /* vt_ticks() when it was made */
    uint32_t stack;
    uint8_t kind, api;
};

/* Bytes freed since the device's last peak from entries made before it, by call site: with the live
 * entries made before the peak, what was live at it. gen: the peak it belongs to (vt_peak_gone). */
struct vt_peak_freed {
    uint64_t bytes;
    uint32_t stack, gen;
    int16_t device;
    uint8_t kind, api;
};

/* An entry made at or before the device's peak (stamp, gen: the peak's) was freed: its bytes count at
 * its site until the peak moves. Called under the lock the entry's table part is freed under. */
void vt_peak_gone(int device, uint32_t gen, const struct vt_peak_who *w, uint64_t size);

/* The sites of peak gen of each device (gens[device]), copied into out (cap of them; with every table
 * lock held). Returns how many there are, which may be more than cap (nothing then copied past it);
 * *lost: some site could not be kept (out of memory), so the peak's sites are not all there. */
size_t vt_peak_copy(const uint32_t *gens, int ndev, struct vt_peak_freed *out, size_t cap, int *lost);

/* The child of a fork starts with no peak. */
void vt_peak_reset(void);

#endif
