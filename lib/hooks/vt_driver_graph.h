/* CUDA graphs' memory nodes (vt_driver_graph.c): what the stream-ordered hooks need of them. */
#ifndef VT_DRIVER_GRAPH_H
#define VT_DRIVER_GRAPH_H

/* Stream capture turns stream-ordered calls into graph nodes. How many captures are under way
 * (vt_hotdata.graph_captures): while none is, the stream-ordered hooks ask nothing more. */
#include <stdatomic.h>
#include <stdint.h>
#include <cuda.h>

#include "vt_hot.h"

/* When stream is capturing: takes an allocation (or, with is_free, a free) as a node of the graph being
 * captured, to be made live (or done) by its launches, and returns 1; 0 when stream is not capturing. */
int vt_graph_captured(CUstream stream, uint64_t dptr, uint64_t size, uint32_t stack, int device, int is_free)
    __attribute__((cold));

#endif
