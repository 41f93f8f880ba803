/* The dump socket's listener (the protocol: common/vt_ctl.h): a thread of its own, "vramtrace-ctl",
 * started with the dumper at the first CUDA call, that accepts `vramtrace dump` and `vramtrace metrics`,
 * checks who asks (its own uid or root), reads the one-line request and hands it to the dumper, which
 * writes the dump and answers. Nothing is left on disk; a fork child listens on its own socket from its
 * own first CUDA call. */
#ifndef VT_LISTEN_H
#define VT_LISTEN_H

/* A request waiting for the dumper: the connection and what it asks for. */
struct vt_listen_req {
    int fd;
    int peek; /* a dump in memory (VT_CTL_PEEK), not a file */
};

/* Binds the socket and starts the thread (once per process; said once when it cannot). */
void vt_listen_start(void);
/* Takes the requests that arrived (each is answered once, then closed); returns how many (at most max). */
int vt_listen_take(struct vt_listen_req *out, int max);
/* Answers r and closes it: "ok PATH" with dump_fd attached (path NULL: a dump in memory), or "error WHY". */
void vt_listen_answer(struct vt_listen_req *r, const char *path, int dump_fd, const char *why);

#endif
