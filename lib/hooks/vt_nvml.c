/* NVML, opened with dlopen at the first dump that asks the driver anything (never at start-up, never
 * at exit). NVML names devices by PCI bus id, CUDA by ordinal: the driver's cuDeviceGetPCIBusId joins
 * them. Only the few entry points used are declared here, with the types of NVML's stable ABI
 * (nvml.h is not among the build's headers). */
#include <dlfcn.h>
#include <stdlib.h>
#include <unistd.h>

#include "vt_log.h"
#include "vt_nvml.h"
#include "vt_real.h"

#define VT_NVML_SUCCESS 0
#define VT_NVML_INSUFFICIENT_SIZE 7
#define VT_NVML_VALUE_NOT_AVAILABLE (~0ull)

/* nvmlProcessInfo_t as of the _v3 entry points. */
struct vt_nvml_process {
    unsigned int pid;
    unsigned long long used;
    unsigned int gpu_instance, compute_instance;
};

typedef void *vt_nvml_device;

static struct {
    int tried, ok;
    int (*init)(void);
    int (*by_bus)(const char *, vt_nvml_device *);
    int (*procs)(vt_nvml_device, unsigned int *, struct vt_nvml_process *);
} vt_nvml;

static int vt_nvml_open(void)
{
    if (vt_nvml.tried)
        return vt_nvml.ok;
    vt_nvml.tried = 1;
    void *h = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (h) {
        vt_nvml.init = (int (*)(void))dlsym(h, "nvmlInit_v2");
        vt_nvml.by_bus = (int (*)(const char *, vt_nvml_device *))dlsym(h, "nvmlDeviceGetHandleByPciBusId_v2");
        vt_nvml.procs = (int (*)(vt_nvml_device, unsigned int *, struct vt_nvml_process *))dlsym(
            h, "nvmlDeviceGetComputeRunningProcesses_v3");
    }
    vt_nvml.ok = h && vt_nvml.init && vt_nvml.by_bus && vt_nvml.procs && vt_nvml.init() == VT_NVML_SUCCESS;
    if (!vt_nvml.ok)
        vt_say_once(VT_ONCE_NVML, "NVML (libnvidia-ml.so.1) is not usable here: process used memory is unknown");
    return vt_nvml.ok;
}

uint64_t vt_nvml_process_used(int dev)
{
    __typeof__(cuDeviceGetPCIBusId) *bus = VT_REAL(cuDeviceGetPCIBusId);
    char id[32];
    vt_nvml_device nd;
    if (!bus || bus(id, sizeof id, dev) != CUDA_SUCCESS || !vt_nvml_open() || vt_nvml.by_bus(id, &nd) != VT_NVML_SUCCESS)
        return UINT64_MAX;
    struct vt_nvml_process few[32], *list = few;
    unsigned int n = 32;
    int r = vt_nvml.procs(nd, &n, list);
    if (r == VT_NVML_INSUFFICIENT_SIZE && n > 32 && (list = malloc(n * sizeof *list)))
        r = vt_nvml.procs(nd, &n, list);
    uint64_t used = UINT64_MAX;
    unsigned int pid = (unsigned int)getpid();
    for (unsigned int i = 0; r == VT_NVML_SUCCESS && i < n; i++)
        if (list[i].pid == pid && list[i].used != VT_NVML_VALUE_NOT_AVAILABLE)
            used = list[i].used;
    if (list != few)
        free(list);
    return used;
}
