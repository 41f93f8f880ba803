/* Signal names accepted for VRAMTRACE_SIGNAL, shared by the library and the vramtrace command. */
#ifndef VT_SIGNAME_H
#define VT_SIGNAME_H

/* The signal named by v (USR1, SIGUSR2, HUP, ..., or a real-time signal number); 0 for none/off/0;
 * -1 when v names nothing vramtrace can use. */
int vt_signal_parse(const char *v);

#endif
