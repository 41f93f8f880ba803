/* The allocation table's index (lib/table/vt_index.c) against a plain reference: random adds, removes and
 * look-ups over clustered addresses and the four address spaces, through several growths. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "vt_index.h"

#define N 200000

static uint8_t live[N];
static uint32_t slot_of[N];
static struct vt_slab slab;
static struct vt_index idx = {.slab = &slab};

static uint64_t addr_of(int k)
{
    /* Clustered like device addresses: 2 MiB-aligned runs with 512-byte steps, a few far apart. */
    return 0x7f0000000000ull + (uint64_t)(k / 1000) * (2u << 20) + (uint64_t)(k % 1000) * 512;
}

int main(void)
{
    unsigned seed = 12345;
    vt_slab_reset(&slab);
    long finds = 0, wrong = 0, adds = 0, removes = 0;
    for (long step = 0; step < 3 * N; step++) {
        int k = (int)(rand_r(&seed) % N);
        uint8_t space = (uint8_t)(k % 4);
        if (!live[k]) {
            uint32_t s = vt_slab_take(&slab);
            struct vt_alloc *e = vt_slab_entry(&slab, s);
            memset(e, 0, sizeof *e);
            e->addr = addr_of(k);
            e->space = space;
            if (vt_index_add(&idx, s) < 0)
                break;
            live[k] = 1;
            slot_of[k] = s;
            adds++;
        } else if (rand_r(&seed) % 3 == 0) {
            vt_index_remove(&idx, slot_of[k]);
            vt_slab_put(&slab, slot_of[k]);
            live[k] = 0;
            removes++;
        }
        /* A look-up of something live, and of something that is not. */
        int q = (int)(rand_r(&seed) % N);
        uint32_t got = vt_index_find(&idx, addr_of(q), (uint8_t)(q % 4));
        wrong += live[q] ? got != slot_of[q] : got != VT_SLAB_NONE;
        wrong += vt_index_find(&idx, addr_of(q), (uint8_t)((q + 1) % 4)) != VT_SLAB_NONE;
        finds += 2;
    }
    long present = 0, missing = 0;
    for (int k = 0; k < N; k++)
        if (live[k]) {
            present++;
            missing += vt_index_find(&idx, addr_of(k), (uint8_t)(k % 4)) != slot_of[k];
        }
    ok(adds > N / 2 && removes > N / 10, "%ld adds and %ld removes over %d keys", adds, removes, N);
    is_u64((uint64_t)wrong, 0, "every one of the look-ups found the right slot, or none");
    ok(present > 0 && missing == 0, "at the end, all %ld live keys are found", present);
    vt_index_reset(&idx);
    ok(vt_index_find(&idx, addr_of(0), 0) == VT_SLAB_NONE, "after a reset nothing is found");
    (void)finds;
    return tap_done();
}
