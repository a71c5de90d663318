// FLASHRNN_HOST_DEVICE marks functions shared by the CPU reference and the CUDA kernels.
#pragma once

#if defined(__CUDACC__)
#define FLASHRNN_HOST_DEVICE __host__ __device__
#else
#define FLASHRNN_HOST_DEVICE
#endif
