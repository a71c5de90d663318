// What the GPU benchmarks share: CUDA error checks, a raw device buffer, and timing with CUDA events
// around each call on one stream (untimed warm-up calls first, the median of the timed ones).
#pragma once

#include <cuda_runtime_api.h>

#include <algorithm>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

namespace bench {

inline void cuda_ok(cudaError_t status, const char* what) {
    if (status != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(status));
}

// Uninitialised device memory (at least 256 bytes, so that empty sizes still get an address).
struct DeviceBuffer {
    void* data = nullptr;
    explicit DeviceBuffer(std::size_t bytes) {
        cuda_ok(cudaMalloc(&data, std::max<std::size_t>(bytes, 256)), "cudaMalloc");
    }
    DeviceBuffer(const DeviceBuffer&) = delete;
    DeviceBuffer& operator=(const DeviceBuffer&) = delete;
    ~DeviceBuffer() { cudaFree(data); }
};

// Median milliseconds of `runs` timed calls of `call` (which enqueues its work on `stream`) after
// `warmup` untimed ones.
inline double median_ms(const std::function<void()>& call, int runs, int warmup = 3,
                        cudaStream_t stream = nullptr) {
    cudaEvent_t start, stop;
    cuda_ok(cudaEventCreate(&start), "cudaEventCreate");
    cuda_ok(cudaEventCreate(&stop), "cudaEventCreate");
    for (int i = 0; i < warmup; ++i)
        call();
    std::vector<float> times;
    for (int i = 0; i < runs; ++i) {
        cuda_ok(cudaEventRecord(start, stream), "cudaEventRecord");
        call();
        cuda_ok(cudaEventRecord(stop, stream), "cudaEventRecord");
        cuda_ok(cudaEventSynchronize(stop), "cudaEventSynchronize");
        float ms = 0;
        cuda_ok(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime");
        times.push_back(ms);
    }
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    std::sort(times.begin(), times.end());
    return times[times.size() / 2];
}

} // namespace bench
