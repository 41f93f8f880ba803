/* The dump signal (`kill -USR1 PID`): installed at the first CUDA call (a process that never uses CUDA
 * keeps its signal dispositions untouched), in a way that keeps the program's own semantics: an ignored
 * signal stays ignored (no dumps on signal, said once), a handler the program had is still called with
 * its own mask and flags, and a one-shot (SA_RESETHAND) handler once, after which the signal's default
 * action is back, as without vramtrace. `vramtrace dump` does not use the signal (common/vt_ctl.h), so a
 * program that takes the signal over later loses only `kill -USR1`; vt_signal_check says so, once. */
#ifndef VT_SIGNAL_H
#define VT_SIGNAL_H

/* Says once when the program has replaced the handler since; cheap (one sigaction call). */
void vt_signal_check(void);

#endif
