/* The control socket: how `vramtrace dump` and `vramtrace metrics` ask a live process for a dump, shared
 * by both halves. It does not depend on the dump signal staying vramtrace's (a program may take SIGUSR1
 * over after its first CUDA call), and each side proves who the other is:
 *
 * - The library's listener (lib/roof/vt_listen.c) binds an abstract Unix socket named
 *   VT_CTL_PREFIX "<pid>.<random>" at its first CUDA call: nothing is left on disk, and it goes with
 *   the process. It answers only peers whose uid is its own or root's (SO_PEERCRED).
 * - The command never trusts the name: it finds the socket among the target's own open files
 *   (/proc/PID/fd, socket inodes) and /proc/PID/net/unix, connects, and accepts the answer only if the
 *   peer's pid (SO_PEERCRED, in the command's pid namespace) is the target's. A name planted by another
 *   process is never among the target's files, and a squatter cannot pass the pid check.
 * - The dump comes back as an open file descriptor (SCM_RIGHTS) with its path: the command reads what
 *   the target wrote, checked with fstat (a regular file of the target's uid), and never opens a path it
 *   was told or found.
 *
 * A request is one message, VT_CTL_DUMP or VT_CTL_PEEK; the answer one message, "ok PATH" (PATH escaped
 * as a dump's text fields are, vt_text.h; "-" for a dump in memory) with the dump's descriptor attached,
 * or "error WHY"; before it, when the dumper is at work already, "busy WHAT" says what it is doing. */
#ifndef VT_CTL_H
#define VT_CTL_H

#include <stddef.h>
#include <sys/types.h>

#define VT_CTL_PREFIX "vramtrace."
/* A dump written to the dump directory, as for a signal. */
#define VT_CTL_DUMP "dump"
/* A dump written to memory only (memfd): for `vramtrace metrics`, which leaves no file behind. */
#define VT_CTL_PEEK "peek"
#define VT_CTL_OK "ok"
#define VT_CTL_ERROR "error"
#define VT_CTL_BUSY "busy"
/* The longest line either side sends. */
#define VT_CTL_LINE 4600

/* The abstract name for pid (without its leading NUL): VT_CTL_PREFIX "<pid>.<16 hex>". */
int vt_ctl_name(char *out, size_t len, long pid, unsigned long long nonce);

/* Sends line (with its '\n') and, when fd >= 0, that descriptor. 0, or -1 with errno. */
int vt_ctl_send(int sock, const char *line, int fd);
/* Receives one line (the '\n' removed) and the descriptor sent with it, if any (*fd, else -1), waiting
 * at most timeout_ms in all. 0, or -1 with errno (ETIMEDOUT when the time ran out, EPROTO for a line
 * that is too long or has no end). A descriptor that comes with anything but one line is closed. */
int vt_ctl_recv(int sock, char *line, size_t len, int *fd, int timeout_ms);

#endif
