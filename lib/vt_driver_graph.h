/* CUDA graphs' memory nodes (vt_driver_graph.c): what the library's fork handler needs of them. */
#ifndef VT_DRIVER_GRAPH_H
#define VT_DRIVER_GRAPH_H

/* In a fork child: the registry's lock, which another thread may have held, is free again. */
void vt_graph_atfork_child(void);

#endif
