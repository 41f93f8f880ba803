/* Test library: a symbolizer plugin that names nothing and takes SLOW_SYMBOLS_MS (300 by default) for
 * each address, installed in place of libvramtrace-symbols.so, so that t_metrics.sh can make the
 * library's metrics file render for seconds and check that an exit dump waiting behind it is written.
 * SLOW_SYMBOLS_MARK: a file made at its first address (the test then knows a rendering used it).
 * SLOW_SYMBOLS_LOG: a file each call is appended to as a line ("open", "frames 0xPC", "close"), so that a
 * test sees when the library opens the symbolizer and which addresses it asks for. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "vt_model.h"

static void slow_log(const char *what, uint64_t pc)
{
    const char *path = getenv("SLOW_SYMBOLS_LOG");
    int fd = path ? open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600) : -1;
    if (fd < 0)
        return;
    char line[64];
    int n = pc ? snprintf(line, sizeof line, "%s 0x%llx\n", what, (unsigned long long)pc)
               : snprintf(line, sizeof line, "%s\n", what);
    if (write(fd, line, (size_t)n) != n)
        fprintf(stderr, "slow_symbols: could not log\n");
    close(fd);
}

static struct vt_symbolizer *slow_open(const struct vt_dumpfile *d)
{
    (void)d;
    slow_log("open", 0);
    static char one;
    return (struct vt_symbolizer *)&one;
}

static const char *slow_frames(struct vt_symbolizer *s, uint64_t pc)
{
    (void)s;
    slow_log("frames", pc);
    const char *mark = getenv("SLOW_SYMBOLS_MARK");
    int fd = mark ? open(mark, O_WRONLY | O_CREAT | O_CLOEXEC, 0600) : -1;
    if (fd >= 0)
        close(fd);
    const char *ms = getenv("SLOW_SYMBOLS_MS");
    long n = ms ? atol(ms) : 300;
    struct timespec t = {n / 1000, n % 1000 * 1000000L};
    nanosleep(&t, NULL);
    return NULL;
}

static void slow_close(struct vt_symbolizer *s)
{
    (void)s;
    slow_log("close", 0);
}

const struct vt_symbolizer_ops vt_libdw_symbolizer = {slow_open, slow_frames, slow_close};
