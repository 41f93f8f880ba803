/* When dumps are written: signal, interval, out-of-memory, exit, and the API call. */
#ifndef VT_DUMPER_H
#define VT_DUMPER_H

/* Asks the dumper thread for an OOM dump (coalesced while one is pending). */
void vt_dumper_request_oom(void);
/* Asks the dumper thread to see about torch's block history (lib/vt_bridge.c). */
void vt_dumper_request_history(void);

#endif
