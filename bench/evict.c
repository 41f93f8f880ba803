/* For bench/py_serving.py (BENCH_EVICT=N): touches N random cache lines of a 256 MiB buffer, as a real
 * program's own work evicts what the library's hooks had in cache between two allocations. */
#include <stdint.h>
#include <stdlib.h>

#define EVICT_BYTES (256u << 20)

static unsigned char *evict_buf;
static uint64_t evict_state = 0x9e3779b97f4a7c15ull;

void bench_evict(unsigned lines)
{
    if (!evict_buf && !(evict_buf = calloc(EVICT_BYTES, 1)))
        return;
    for (unsigned i = 0; i < lines; i++) {
        evict_state ^= evict_state << 13;
        evict_state ^= evict_state >> 7;
        evict_state ^= evict_state << 17;
        evict_buf[(evict_state % (EVICT_BYTES / 64)) * 64]++;
    }
}
