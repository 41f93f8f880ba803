/* The line a program started by `vramtrace run` says as it ends: where its dumps are and the command
 * that reads them, as heaptrack and valgrind end with where their output went. */
#ifndef VT_ENDNOTE_H
#define VT_ENDNOTE_H

/* Says it on stderr when this process is the one VRAMTRACE_END_NOTE_PID names (not its children,
 * which inherit the setting); after the exit dump. */
void vt_endnote_say(void);

#endif
