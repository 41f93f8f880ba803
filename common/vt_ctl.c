/* vt_ctl.h. Messages are SOCK_SEQPACKET records: one request, one answer, each whole or not at all. */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "vt_ctl.h"

int vt_ctl_name(char *out, size_t len, long pid, unsigned long long nonce)
{
    int n = snprintf(out, len, VT_CTL_PREFIX "%ld.%016llx", pid, nonce);
    return n > 0 && (size_t)n < len ? 0 : -1;
}

int vt_ctl_send(int sock, const char *line, int fd)
{
    struct iovec iov = {(void *)line, strlen(line)};
    union {
        char buf[CMSG_SPACE(sizeof(int))];
        struct cmsghdr align;
    } c;
    struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1};
    if (fd >= 0) {
        memset(&c, 0, sizeof c);
        m.msg_control = c.buf;
        m.msg_controllen = sizeof c.buf;
        struct cmsghdr *h = CMSG_FIRSTHDR(&m);
        h->cmsg_level = SOL_SOCKET;
        h->cmsg_type = SCM_RIGHTS;
        h->cmsg_len = CMSG_LEN(sizeof(int));
        memcpy(CMSG_DATA(h), &fd, sizeof fd);
    }
    ssize_t n;
    /* MSG_NOSIGNAL: a peer that went away is an error here, never a SIGPIPE in the program. */
    while ((n = sendmsg(sock, &m, MSG_NOSIGNAL)) < 0 && errno == EINTR)
        ;
    return n == (ssize_t)iov.iov_len ? 0 : -1;
}

static long vt_ms_since(const struct timespec *t0)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long)(t.tv_sec - t0->tv_sec) * 1000 + (t.tv_nsec - t0->tv_nsec) / 1000000;
}

int vt_ctl_recv(int sock, char *line, size_t len, int *fd, int timeout_ms)
{
    *fd = -1;
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) {
        long left = timeout_ms - vt_ms_since(&t0);
        if (left <= 0) {
            errno = ETIMEDOUT;
            return -1;
        }
        struct pollfd p = {.fd = sock, .events = POLLIN};
        int r = poll(&p, 1, (int)left);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return -1;
        if (r > 0)
            break;
    }
    union {
        char buf[CMSG_SPACE(4 * sizeof(int))];
        struct cmsghdr align;
    } c;
    struct iovec iov = {line, len - 1};
    struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = c.buf, .msg_controllen = sizeof c.buf};
    ssize_t n;
    while ((n = recvmsg(sock, &m, MSG_DONTWAIT | MSG_CMSG_CLOEXEC)) < 0 && errno == EINTR)
        ;
    if (n < 0)
        return -1;
    /* Every descriptor that came is ours to close: keep the first of a single SCM_RIGHTS, close the rest. */
    for (struct cmsghdr *h = CMSG_FIRSTHDR(&m); h; h = CMSG_NXTHDR(&m, h)) {
        if (h->cmsg_level != SOL_SOCKET || h->cmsg_type != SCM_RIGHTS)
            continue;
        size_t k = (h->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        for (size_t i = 0; i < k; i++) {
            int got;
            memcpy(&got, CMSG_DATA(h) + i * sizeof(int), sizeof got);
            if (*fd < 0)
                *fd = got;
            else
                close(got);
        }
    }
    int bad = n == 0 || (m.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) || line[n - 1] != '\n' ||
              memchr(line, '\n', (size_t)n - 1) || memchr(line, 0, (size_t)n);
    if (bad) {
        if (*fd >= 0)
            close(*fd);
        *fd = -1;
        errno = n == 0 ? ECONNRESET : EPROTO;
        return -1;
    }
    line[n - 1] = 0;
    return 0;
}
