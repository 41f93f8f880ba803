/* Driver hooks for CUDA graphs' memory nodes. An allocation node's memory is live from a launch of a
 * graph that holds it until it is freed: by a free node (in the same graph, at the end of that launch;
 * in another graph, when that one is launched), by cuMemFreeAsync/cuMemFree (found in the table as any
 * stream-ordered pointer), never by the graph's destruction. So nodes are remembered by graph, with the
 * stack of the call that built them, executable graphs by the graph they came from, and a launch puts
 * the nodes its graph does not free itself into the table. Once any memory node exists a launch costs
 * two hash look-ups and a walk of its own graph's memory nodes; before, a flag test. Under stream
 * capture (counted by its begin and end), a stream-ordered allocation or free on a capturing stream is
 * a node of the graph being captured, as the driver makes it. Nodes added through the generic
 * cuGraphAddNode count the same, and a child graph whose ownership moves to its parent (the only way a
 * child graph may hold memory nodes) hands its nodes to the parent. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "vt_call.h"
#include "vt_driver_graph.h"
#include "vt_hash.h"
#include "vt_hot.h"
#include "vt_real.h"
#include "vt_thread.h"
#include "vt_module.h"

struct vt_gnode {
    uint64_t dptr, size;
    uint32_t stack;
    int16_t device;
    uint8_t is_free; /* a free node: frees dptr when its graph is launched */
    struct vt_gnode *next;
};

/* A graph with memory nodes, and its nodes: a launch walks only its own graph's. */
struct vt_ggraph {
    uint64_t graph;
    struct vt_gnode *nodes;
    size_t n;
    UT_hash_handle hh;
};

struct vt_gexec {
    uint64_t exec, graph;
    UT_hash_handle hh;
};

static pthread_mutex_t vt_g_lock = PTHREAD_MUTEX_INITIALIZER;
static struct vt_ggraph *vt_ggraphs;
static struct vt_gexec *vt_gexecs;
static atomic_int vt_g_any; /* a memory node was ever made: launches look */

/* A graph's record and its nodes, out of the table already. */
static void vt_ggraph_free(struct vt_ggraph *g)
{
    for (struct vt_gnode *x = g->nodes, *next; x; x = next) {
        next = x->next;
        free(x);
    }
    free(g);
}

static void vt_gnode_add(uint64_t graph, uint64_t dptr, uint64_t size, uint32_t stack, int device, int is_free)
{
    struct vt_gnode *n = calloc(1, sizeof *n);
    if (!n)
        return;
    *n = (struct vt_gnode){dptr, size, stack, (int16_t)device, (uint8_t)is_free, NULL};
    pthread_mutex_lock(&vt_g_lock);
    struct vt_ggraph *g;
    HASH_FIND(hh, vt_ggraphs, &graph, sizeof graph, g);
    if (!g && (g = calloc(1, sizeof *g))) {
        g->graph = graph;
        vt_hash_oom = 0;
        HASH_ADD(hh, vt_ggraphs, graph, sizeof g->graph, g);
        if (vt_hash_oom) { /* not taken: the node goes untracked, as below */
            free(g);
            g = NULL;
        }
    }
    if (g) {
        n->next = g->nodes;
        g->nodes = n;
        g->n++;
    } else {
        free(n);
    }
    pthread_mutex_unlock(&vt_g_lock);
    atomic_store(&vt_g_any, 1);
}


int vt_graph_captured(CUstream stream, uint64_t dptr, uint64_t size, uint32_t stack, int device, int is_free)
{
    CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
    CUgraph graph = NULL;
    __typeof__(cuStreamGetCaptureInfo_v3) *info = VT_REAL(cuStreamGetCaptureInfo_v3);
    if (!info || info(stream, &status, NULL, &graph, NULL, NULL, NULL) != CUDA_SUCCESS ||
        status != CU_STREAM_CAPTURE_STATUS_ACTIVE || !graph)
        return 0;
    vt_gnode_add((uint64_t)(uintptr_t)graph, dptr, size, stack, device, is_free);
    return 1;
}

static CUresult vt_capture_begun(CUresult r)
{
    if (r == CUDA_SUCCESS)
        atomic_fetch_add(&vt_hotdata.graph_captures, 1);
    return r;
}

static CUresult vt_capture_ended(CUresult r)
{
    /* Ended even when it failed (an invalidated capture ends too); never below zero. */
    int n = atomic_load(&vt_hotdata.graph_captures);
    while (n > 0 && !atomic_compare_exchange_weak(&vt_hotdata.graph_captures, &n, n - 1))
        ;
    return r;
}

CUresult cuStreamBeginCapture_v2(CUstream stream, CUstreamCaptureMode mode)
{
    VT_REAL_OR(cuStreamBeginCapture_v2, CUDA_ERROR_NOT_INITIALIZED);
    return vt_capture_begun(real(stream, mode));
}

CUresult cuStreamBeginCapture_v2_ptsz(CUstream stream, CUstreamCaptureMode mode)
{
    VT_REAL_OR(cuStreamBeginCapture_v2_ptsz, CUDA_ERROR_NOT_INITIALIZED);
    return vt_capture_begun(real(stream, mode));
}

CUresult cuStreamBeginCaptureToGraph(CUstream stream, CUgraph graph, const CUgraphNode *deps,
                                     const CUgraphEdgeData *edges, size_t ndeps, CUstreamCaptureMode mode)
{
    VT_REAL_OR(cuStreamBeginCaptureToGraph, CUDA_ERROR_NOT_INITIALIZED);
    return vt_capture_begun(real(stream, graph, deps, edges, ndeps, mode));
}

CUresult cuStreamBeginCaptureToGraph_ptsz(CUstream stream, CUgraph graph, const CUgraphNode *deps,
                                          const CUgraphEdgeData *edges, size_t ndeps, CUstreamCaptureMode mode)
{
    VT_REAL_OR(cuStreamBeginCaptureToGraph_ptsz, CUDA_ERROR_NOT_INITIALIZED);
    return vt_capture_begun(real(stream, graph, deps, edges, ndeps, mode));
}

CUresult cuStreamEndCapture(CUstream stream, CUgraph *graph)
{
    VT_REAL_OR(cuStreamEndCapture, CUDA_ERROR_NOT_INITIALIZED);
    return vt_capture_ended(real(stream, graph));
}

CUresult cuStreamEndCapture_ptsz(CUstream stream, CUgraph *graph)
{
    VT_REAL_OR(cuStreamEndCapture_ptsz, CUDA_ERROR_NOT_INITIALIZED);
    return vt_capture_ended(real(stream, graph));
}

/* In a fork child: the registry's lock, which another thread may have held, is free again. */
static void vt_graph_atfork_child(void)
{
    /* The parent's graphs mean nothing to a child that cannot use CUDA; only the lock must be free. */
    vt_mutex_reset(&vt_g_lock);
}

CUresult cuGraphAddMemAllocNode(CUgraphNode *node, CUgraph graph, const CUgraphNode *deps, size_t ndeps,
                                CUDA_MEM_ALLOC_NODE_PARAMS *params)
{
    VT_REAL_OR(cuGraphAddMemAllocNode, CUDA_ERROR_NOT_INITIALIZED);
    struct vt_call c;
    vt_call_alloc_begin(&c, VT_FN_cuGraphAddMemAllocNode);
    CUresult r = real(node, graph, deps, ndeps, params);
    vt_call_after(&c);
    if (r == CUDA_SUCCESS && params)
        vt_gnode_add((uint64_t)(uintptr_t)graph, params->dptr, params->bytesize, c.stack,
                     params->poolProps.location.type == CU_MEM_LOCATION_TYPE_DEVICE ? params->poolProps.location.id : -1, 0);
    vt_call_plain_end(&c, r == CUDA_SUCCESS);
    return r;
}

CUresult cuGraphAddMemFreeNode(CUgraphNode *node, CUgraph graph, const CUgraphNode *deps, size_t ndeps, CUdeviceptr dptr)
{
    VT_REAL_OR(cuGraphAddMemFreeNode, CUDA_ERROR_NOT_INITIALIZED);
    struct vt_call c;
    vt_call_plain_begin(&c, VT_FN_cuGraphAddMemFreeNode);
    CUresult r = real(node, graph, deps, ndeps, dptr);
    vt_call_after(&c);
    if (r == CUDA_SUCCESS)
        vt_gnode_add((uint64_t)(uintptr_t)graph, dptr, 0, 0, -1, 1);
    vt_call_plain_end(&c, r == CUDA_SUCCESS);
    return r;
}

/* A child graph moved into its parent: its memory nodes are the parent's from now on. */
static void vt_graph_moved(uint64_t child, uint64_t parent)
{
    pthread_mutex_lock(&vt_g_lock);
    struct vt_ggraph *c, *p;
    HASH_FIND(hh, vt_ggraphs, &child, sizeof child, c);
    if (c) {
        HASH_DEL(vt_ggraphs, c);
        HASH_FIND(hh, vt_ggraphs, &parent, sizeof parent, p);
        if (p) {
            struct vt_gnode **tail = &p->nodes;
            while (*tail)
                tail = &(*tail)->next;
            *tail = c->nodes;
            p->n += c->n;
            free(c);
        } else {
            c->graph = parent;
            vt_hash_oom = 0;
            HASH_ADD(hh, vt_ggraphs, graph, sizeof c->graph, c);
            if (vt_hash_oom)
                vt_ggraph_free(c); /* not taken: its nodes go untracked */
        }
    }
    pthread_mutex_unlock(&vt_g_lock);
}

/* cuGraphAddNode in both forms: a memory node as through cuGraphAddMemAllocNode/FreeNode; a stack is
 * taken only for an allocation node. */
static void vt_node_begin(struct vt_call *c, enum vt_fn fn, const CUgraphNodeParams *p)
{
    if (p && p->type == CU_GRAPH_NODE_TYPE_MEM_ALLOC)
        vt_call_alloc_begin(c, fn);
    else
        vt_call_plain_begin(c, fn);
}

static CUresult vt_node_added(struct vt_call *c, CUresult r, CUgraph graph, const CUgraphNodeParams *p)
{
    vt_call_after(c);
    uint64_t g = (uint64_t)(uintptr_t)graph;
    if (r == CUDA_SUCCESS && p) {
        if (p->type == CU_GRAPH_NODE_TYPE_MEM_ALLOC)
            vt_gnode_add(g, p->alloc.dptr, p->alloc.bytesize, c->stack,
                         p->alloc.poolProps.location.type == CU_MEM_LOCATION_TYPE_DEVICE ? p->alloc.poolProps.location.id
                                                                                        : -1,
                         0);
        else if (p->type == CU_GRAPH_NODE_TYPE_MEM_FREE)
            vt_gnode_add(g, p->free.dptr, 0, 0, -1, 1);
        else if (p->type == CU_GRAPH_NODE_TYPE_GRAPH && p->graph.ownership == CU_GRAPH_CHILD_GRAPH_OWNERSHIP_MOVE &&
                 atomic_load(&vt_g_any))
            vt_graph_moved((uint64_t)(uintptr_t)p->graph.graph, g);
    }
    vt_call_plain_end(c, r == CUDA_SUCCESS);
    return r;
}

CUresult cuGraphAddNode(CUgraphNode *node, CUgraph graph, const CUgraphNode *deps, size_t ndeps, CUgraphNodeParams *params)
{
    VT_REAL_OR(cuGraphAddNode, CUDA_ERROR_NOT_INITIALIZED);
    struct vt_call c;
    vt_node_begin(&c, VT_FN_cuGraphAddNode, params);
    return vt_node_added(&c, real(node, graph, deps, ndeps, params), graph, params);
}

CUresult cuGraphAddNode_v2(CUgraphNode *node, CUgraph graph, const CUgraphNode *deps, const CUgraphEdgeData *edges,
                           size_t ndeps, CUgraphNodeParams *params)
{
    VT_REAL_OR(cuGraphAddNode_v2, CUDA_ERROR_NOT_INITIALIZED);
    struct vt_call c;
    vt_node_begin(&c, VT_FN_cuGraphAddNode_v2, params);
    return vt_node_added(&c, real(node, graph, deps, edges, ndeps, params), graph, params);
}

static void vt_gexec_add(CUresult r, CUgraphExec *exec, CUgraph graph)
{
    if (r != CUDA_SUCCESS || !exec || !atomic_load(&vt_g_any))
        return;
    struct vt_gexec *e = calloc(1, sizeof *e);
    if (!e)
        return;
    e->exec = (uint64_t)(uintptr_t)*exec;
    e->graph = (uint64_t)(uintptr_t)graph;
    pthread_mutex_lock(&vt_g_lock);
    struct vt_gexec *old;
    HASH_FIND(hh, vt_gexecs, &e->exec, sizeof e->exec, old);
    if (old) {
        HASH_DEL(vt_gexecs, old);
        free(old);
    }
    vt_hash_oom = 0;
    HASH_ADD(hh, vt_gexecs, exec, sizeof e->exec, e);
    if (vt_hash_oom)
        free(e); /* not taken: its launches are not counted */
    pthread_mutex_unlock(&vt_g_lock);
}

CUresult cuGraphInstantiateWithFlags(CUgraphExec *exec, CUgraph graph, unsigned long long flags)
{
    VT_REAL_OR(cuGraphInstantiateWithFlags, CUDA_ERROR_NOT_INITIALIZED);
    CUresult r = real(exec, graph, flags);
    vt_gexec_add(r, exec, graph);
    return r;
}

CUresult cuGraphInstantiateWithParams(CUgraphExec *exec, CUgraph graph, CUDA_GRAPH_INSTANTIATE_PARAMS *params)
{
    VT_REAL_OR(cuGraphInstantiateWithParams, CUDA_ERROR_NOT_INITIALIZED);
    CUresult r = real(exec, graph, params);
    vt_gexec_add(r, exec, graph);
    return r;
}

CUresult cuGraphInstantiateWithParams_ptsz(CUgraphExec *exec, CUgraph graph, CUDA_GRAPH_INSTANTIATE_PARAMS *params)
{
    VT_REAL_OR(cuGraphInstantiateWithParams_ptsz, CUDA_ERROR_NOT_INITIALIZED);
    CUresult r = real(exec, graph, params);
    vt_gexec_add(r, exec, graph);
    return r;
}

/* After a launch of exec: its graph's allocations that it does not free itself are live; what it frees
 * of other graphs' allocations is not. The launch itself is not an allocating call of the program's:
 * each entry carries the stack of the call that built its node. */
static void vt_graph_launched(CUgraphExec exec)
{
    uint64_t key = (uint64_t)(uintptr_t)exec;
    pthread_mutex_lock(&vt_g_lock);
    struct vt_gexec *e;
    struct vt_ggraph *g = NULL;
    HASH_FIND(hh, vt_gexecs, &key, sizeof key, e);
    if (e)
        HASH_FIND(hh, vt_ggraphs, &e->graph, sizeof e->graph, g);
    struct vt_gnode *mine = g && g->n ? malloc(g->n * sizeof *mine) : NULL;
    size_t n = 0;
    for (struct vt_gnode *x = mine ? g->nodes : NULL; x; x = x->next)
        mine[n++] = *x;
    pthread_mutex_unlock(&vt_g_lock);
    for (size_t i = 0; i < n; i++) {
        int freed_here = 0;
        for (size_t j = 0; j < n && !mine[i].is_free; j++)
            freed_here |= mine[j].is_free && mine[j].dptr == mine[i].dptr;
        if (mine[i].is_free || freed_here) {
            if (mine[i].is_free)
                vt_table_remove(mine[i].dptr, VT_KIND_GRAPH, NULL);
            continue;
        }
        struct vt_alloc a = {.addr = mine[i].dptr, .size = mine[i].size, .kind = VT_KIND_GRAPH,
                             .device = mine[i].device, .api = VT_FN_cuGraphAddMemAllocNode, .stack = mine[i].stack};
        vt_table_remove(a.addr, VT_KIND_GRAPH, NULL); /* a launch after an earlier one's free we did not see */
        vt_table_add(&a);
    }
    free(mine);
}

static CUresult vt_graph_launch(CUresult (*real)(CUgraphExec, CUstream), CUgraphExec exec, CUstream stream)
{
    CUresult r = real(exec, stream);
    if (r == CUDA_SUCCESS && atomic_load_explicit(&vt_g_any, memory_order_relaxed)) {
        int saved = errno;
        vt_graph_launched(exec);
        errno = saved;
    }
    return r;
}

CUresult cuGraphLaunch(CUgraphExec exec, CUstream stream)
{
    VT_REAL_OR(cuGraphLaunch, CUDA_ERROR_NOT_INITIALIZED);
    return vt_graph_launch(real, exec, stream);
}

CUresult cuGraphLaunch_ptsz(CUgraphExec exec, CUstream stream)
{
    VT_REAL_OR(cuGraphLaunch_ptsz, CUDA_ERROR_NOT_INITIALIZED);
    return vt_graph_launch(real, exec, stream);
}

CUresult cuGraphExecDestroy(CUgraphExec exec)
{
    VT_REAL_OR(cuGraphExecDestroy, CUDA_ERROR_NOT_INITIALIZED);
    CUresult r = real(exec);
    if (r == CUDA_SUCCESS && atomic_load(&vt_g_any)) {
        uint64_t key = (uint64_t)(uintptr_t)exec;
        pthread_mutex_lock(&vt_g_lock);
        struct vt_gexec *e;
        HASH_FIND(hh, vt_gexecs, &key, sizeof key, e);
        if (e) {
            HASH_DEL(vt_gexecs, e);
            free(e);
        }
        pthread_mutex_unlock(&vt_g_lock);
    }
    return r;
}

CUresult cuGraphDestroy(CUgraph graph)
{
    VT_REAL_OR(cuGraphDestroy, CUDA_ERROR_NOT_INITIALIZED);
    CUresult r = real(graph);
    if (r == CUDA_SUCCESS && atomic_load(&vt_g_any)) {
        /* Its nodes go; memory a launch made live stays until freed. */
        uint64_t key = (uint64_t)(uintptr_t)graph;
        pthread_mutex_lock(&vt_g_lock);
        struct vt_ggraph *g;
        HASH_FIND(hh, vt_ggraphs, &key, sizeof key, g);
        if (g) {
            HASH_DEL(vt_ggraphs, g);
            vt_ggraph_free(g);
        }
        pthread_mutex_unlock(&vt_g_lock);
    }
    return r;
}

VT_MODULE(graph, .child = vt_graph_atfork_child);
