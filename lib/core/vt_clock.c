/* The library's stamp clock (vt_clock.h). The TSC's rate is learnt from two readings of both clocks:
 * the first tick ever taken and the conversion's own; the error of a conversion is that of the two
 * readings (tens of ns), whatever the time between them. */
#include <fcntl.h>
#include <pthread.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "vt_clock.h"
#include "vt_hot.h"

static uint64_t vt_tsc0, vt_ns0;
static pthread_once_t vt_clock_once = PTHREAD_ONCE_INIT;

uint64_t vt_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Whether the kernel says the TSC ticks at one rate, on every core, in every power state: both flags on
 * the first processor of /proc/cpuinfo (read with system calls only: no stdio in a hook's path). */
static int vt_tsc_steady(void)
{
#if defined(__x86_64__)
    char buf[4096];
    int fd = open("/proc/cpuinfo", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    size_t got = 0;
    ssize_t r;
    while (got < sizeof buf - 1 && (r = read(fd, buf + got, sizeof buf - 1 - got)) > 0)
        got += (size_t)r;
    close(fd);
    buf[got] = 0;
    char *flags = strstr(buf, "\nflags");
    if (!flags)
        return 0;
    char *end = strchr(flags + 1, '\n');
    if (end)
        *end = 0;
    return strstr(flags, " constant_tsc") && strstr(flags, " nonstop_tsc");
#else
    return 0;
#endif
}

static void vt_clock_init(void)
{
    int steady = vt_tsc_steady();
#if defined(__x86_64__)
    if (steady) {
        vt_ns0 = vt_now_ns();
        vt_tsc0 = __rdtsc();
    }
#endif
    __atomic_store_n(&vt_hotdata.tsc_mode, steady ? 1 : 2, __ATOMIC_RELEASE);
}

uint64_t vt_ticks_slow(void)
{
    pthread_once(&vt_clock_once, vt_clock_init);
#if defined(__x86_64__)
    if (__atomic_load_n(&vt_hotdata.tsc_mode, __ATOMIC_ACQUIRE) == 1)
        return __rdtsc();
#endif
    return vt_now_ns();
}

void vt_ticks_scale(struct vt_ticks_scale *s)
{
    pthread_once(&vt_clock_once, vt_clock_init);
    *s = (struct vt_ticks_scale){0};
#if defined(__x86_64__)
    if (__atomic_load_n(&vt_hotdata.tsc_mode, __ATOMIC_ACQUIRE) != 1)
        return;
    uint64_t ns = vt_now_ns(), tsc = __rdtsc();
    s->tsc0 = vt_tsc0;
    s->ns0 = vt_ns0;
    /* Less than a microsecond after the first tick the rate cannot be measured, and does not matter:
     * any rate puts a stamp of that microsecond within it. */
    s->ns_per_tick = tsc > vt_tsc0 + 3000 && ns > vt_ns0 + 1000 ? (double)(ns - vt_ns0) / (double)(tsc - vt_tsc0)
                                                               : 1.0 / 3.0;
#endif
}
