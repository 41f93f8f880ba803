/* NVML's figure for this process: the memory nvidia-smi shows for it on one device. */
#ifndef VT_NVML_H
#define VT_NVML_H

#include <stdint.h>

/* Bytes NVML reports this process using on CUDA device ordinal dev, or UINT64_MAX when NVML is
 * absent, fails, or does not list this process there. Dumper thread only. */
uint64_t vt_nvml_process_used(int dev);

#endif
