// CUDA and cuBLAS status checks that throw DeviceError naming the failed call.
#pragma once

#include "flashrnn/core/error.hpp"
#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <stdexcept>
#include <string>

namespace flashrnn::cuda {

inline void check(cudaError_t status, const char* what) {
    if (status != cudaSuccess)
        throw DeviceError(std::string("flashrnn: ") + what + ": " + cudaGetErrorName(status) + " (" +
                          cudaGetErrorString(status) + ")");
}

inline void check(cublasStatus_t status, const char* what) {
    if (status != CUBLAS_STATUS_SUCCESS)
        throw DeviceError(std::string("flashrnn: ") + what + ": " + cublasGetStatusName(status) + " (" +
                          cublasGetStatusString(status) + ")");
}

// After a kernel launch: reports a bad launch configuration at once (not at the next sync).
inline void check_launch(const char* kernel) {
    check(cudaGetLastError(), kernel);
}

} // namespace flashrnn::cuda
