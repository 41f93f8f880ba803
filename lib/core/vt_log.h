/* Messages from vramtrace to stderr: one line each, "vramtrace: ...", and a failure said only once.
 * Until the process makes its first CUDA call, messages are held, not written: a process that never
 * uses CUDA (a shell, ls, a launcher) hears nothing from vramtrace. */
#ifndef VT_LOG_H
#define VT_LOG_H

enum vt_once {
    VT_ONCE_DIR,
    VT_ONCE_WRITE,
    VT_ONCE_NOMEM,
    VT_ONCE_SIGNAL,
    VT_ONCE_THREAD,
    VT_ONCE_NVML,
    VT_ONCE_PYTHON,
    VT_ONCE_EXIT,
    VT_ONCE_LISTEN,
    VT_ONCE_STACKS,
    VT_ONCE_SIGNAL_TAKEN,
    VT_ONCE_METRICS,
    VT_ONCE_SYMBOLS,
    VT_ONCE_COUNT
};

/* Writes the message unless this key already said something; keeps errno. Never raises SIGPIPE. */
void vt_say_once(enum vt_once key, const char *fmt, ...) __attribute__((format(printf, 2, 3), cold));
void vt_say(const char *fmt, ...) __attribute__((format(printf, 1, 2), cold));

/* Writes the messages held so far, and every later one at once (the first CUDA call). */
void vt_log_release(void);

#endif
