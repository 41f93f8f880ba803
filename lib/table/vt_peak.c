/* The composition of each device's peak, kept as the program runs (vt_peak.h). The table moves a device's
 * peak, with the stamp of the entry that made it and a new generation, whenever reserved memory passes
 * it (vt_table.c). What was live at that moment is then two parts: the entries still live that were
 * made at or before it (the dump has them with their times), and the entries made before it and freed
 * since, which only this file remembers: their bytes by call site, counted here as each is freed. A
 * peak that moves again starts a new generation, and older sums stop counting.
 *
 * Cost: a free of reserved memory made after the peak (a serving loop's, once its memory has grown to
 * its high-water mark) costs one compare, on a line the free reads anyway; only frees of memory older
 * than the peak come here, under a lock of this file's own, taken inside the table's (never the other
 * way). Sites are few (the table's distinct stacks of reserved memory), so the sums are a small open
 * table, rebuilt without stale generations when half full, bounded at VT_PEAK_SLOTS_MAX. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "vt_lock.h"
#include "vt_peak.h"
#include "vt_table.h"
#include "vt_thread.h"

#define VT_PEAK_SLOTS_MAX (1u << 16)

static pthread_mutex_t vt_peak_mu = PTHREAD_MUTEX_INITIALIZER;
static struct vt_peak_freed *vt_slots; /* bytes 0: empty */
static size_t vt_nslots, vt_used;
static uint32_t vt_gen_seen[VT_MAX_DEVICES]; /* the newest peak a free has told of, per device */
static int vt_lost;

static size_t vt_slot_of(int device, uint32_t stack, uint8_t kind, uint8_t api, size_t mask)
{
    uint64_t h = ((uint64_t)stack << 24 ^ (uint64_t)(uint16_t)device << 16 ^ (uint64_t)kind << 8 ^ api) *
                 0x9e3779b97f4a7c15ull;
    return (size_t)(h >> 32) & mask;
}

static int vt_same(const struct vt_peak_freed *x, int device, const struct vt_peak_who *w)
{
    return x->device == device && x->stack == w->stack && x->kind == w->kind && x->api == w->api;
}

static int vt_current(const struct vt_peak_freed *x)
{
    return x->bytes && x->device >= 0 && x->device < VT_MAX_DEVICES && x->gen == vt_gen_seen[x->device];
}

/* The table twice as large (or as large, when stale sums made it look full), with this generation's
 * sums alone. 0, or -1 when out of memory or at the bound. */
static int vt_rebuild(void)
{
    size_t live = 0;
    for (size_t i = 0; i < vt_nslots; i++)
        live += vt_current(&vt_slots[i]);
    size_t n = vt_nslots ? vt_nslots : 64;
    while (2 * (live + 1) > n)
        n *= 2;
    if (n > VT_PEAK_SLOTS_MAX)
        return -1;
    struct vt_peak_freed *t = calloc(n, sizeof *t);
    if (!t)
        return -1;
    for (size_t i = 0; i < vt_nslots; i++) {
        const struct vt_peak_freed *x = &vt_slots[i];
        if (!vt_current(x))
            continue;
        size_t s = vt_slot_of(x->device, x->stack, x->kind, x->api, n - 1);
        while (t[s].bytes)
            s = (s + 1) & (n - 1);
        t[s] = *x;
    }
    free(vt_slots);
    vt_slots = t;
    vt_nslots = n;
    vt_used = live;
    return 0;
}

void vt_peak_gone(int device, uint32_t gen, const struct vt_peak_who *w, uint64_t size)
{
    if (device < 0 || device >= VT_MAX_DEVICES || !size)
        return;
    vt_mutex_lock(&vt_peak_mu);
    if ((int32_t)(gen - vt_gen_seen[device]) > 0)
        vt_gen_seen[device] = gen;
    if (gen != vt_gen_seen[device])
        goto out; /* a peak that has moved since (another thread's) */
    if (2 * (vt_used + 1) > vt_nslots && vt_rebuild() < 0) {
        vt_lost = 1;
        goto out;
    }
    size_t mask = vt_nslots - 1, s = vt_slot_of(device, w->stack, w->kind, w->api, mask);
    /* The site's sum, or the first slot free or stale on the way (a stale one is reused). */
    size_t at = SIZE_MAX;
    for (;; s = (s + 1) & mask) {
        struct vt_peak_freed *x = &vt_slots[s];
        if (!x->bytes) {
            if (at == SIZE_MAX)
                at = s;
            break;
        }
        if (vt_same(x, device, w)) {
            if (x->gen == gen) {
                x->bytes += size;
                goto out;
            }
            at = s; /* its older generation's: this one's now */
            break;
        }
        if (at == SIZE_MAX && !vt_current(x))
            at = s;
    }
    if (!vt_slots[at].bytes)
        vt_used++;
    vt_slots[at] = (struct vt_peak_freed){size, w->stack, gen, (int16_t)device, w->kind, w->api};
out:
    vt_mutex_unlock(&vt_peak_mu);
}

size_t vt_peak_copy(const uint32_t *gens, int ndev, struct vt_peak_freed *out, size_t cap, int *lost)
{
    size_t n = 0;
    vt_mutex_lock(&vt_peak_mu);
    for (size_t i = 0; i < vt_nslots; i++) {
        const struct vt_peak_freed *x = &vt_slots[i];
        if (!x->bytes || x->device < 0 || x->device >= ndev || x->gen != gens[x->device])
            continue;
        if (n < cap)
            out[n] = *x;
        n++;
    }
    *lost = vt_lost;
    vt_mutex_unlock(&vt_peak_mu);
    return n;
}

void vt_peak_reset(void)
{
    /* The forking thread held every table lock, inside which alone this file's is taken: it is free. */
    vt_mutex_reset(&vt_peak_mu);
    free(vt_slots);
    vt_slots = NULL;
    vt_nslots = vt_used = 0;
    memset(vt_gen_seen, 0, sizeof vt_gen_seen);
    vt_lost = 0;
}
