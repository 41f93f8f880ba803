/* vt_fd.h. The floor is three quarters of the soft limit, at most 4096: high enough that a program
 * counting up from 3 does not meet us, low enough that the kernel's table of a process with a limit of
 * a million is not grown to that size for one descriptor. */
#include <errno.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include "vt_fd.h"

/* The lowest number vramtrace keeps a descriptor at; 0 when it may keep none. */
static rlim_t vt_fd_floor(void)
{
    struct rlimit rl;
    rlim_t cur = getrlimit(RLIMIT_NOFILE, &rl) == 0 ? rl.rlim_cur : 0;
    if (cur < VT_FD_MIN_LIMIT)
        return 0;
    rlim_t floor = cur / 4 * 3;
    return floor > 4096 ? 4096 : floor;
}

int vt_fd_spare(void)
{
    return vt_fd_floor() > 0;
}

void vt_fd_above(void (*fn)(void *), void *arg)
{
    int fill[4096], n = 0;
    rlim_t floor = vt_fd_floor();
    int base = floor ? open("/dev/null", O_RDONLY | O_CLOEXEC) : -1;
    if (base >= 0 && (rlim_t)base < floor) {
        fill[n++] = base;
        while (n < (int)(sizeof fill / sizeof fill[0])) {
            int fd = fcntl(base, F_DUPFD_CLOEXEC, 0);
            if (fd < 0)
                break;
            if ((rlim_t)fd >= floor) {
                close(fd);
                break;
            }
            fill[n++] = fd;
        }
    } else if (base >= 0) {
        close(base);
    }
    fn(arg);
    int saved = errno;
    while (n)
        close(fill[--n]);
    errno = saved;
}

int vt_fd_high(int fd)
{
    if (fd < 0)
        return -1;
    rlim_t floor = vt_fd_floor();
    if (!floor) {
        close(fd);
        errno = EMFILE;
        return -1;
    }
    if ((rlim_t)fd >= floor)
        return fcntl(fd, F_SETFD, FD_CLOEXEC) == 0 ? fd : (close(fd), -1);
    int hi = fcntl(fd, F_DUPFD_CLOEXEC, (int)floor);
    int err = errno;
    close(fd);
    errno = err;
    return hi;
}
