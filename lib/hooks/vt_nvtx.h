/* NVTX's memory extension, read when the library is NVTX's tool (vt_nvtx.c). */
#ifndef VT_NVTX_H
#define VT_NVTX_H

/* In a fork child: the heaps' lock is free again (the thread that held it is not there). */

#endif
