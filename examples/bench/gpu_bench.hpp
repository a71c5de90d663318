// What the GPU benchmarks share: CUDA error checks, a raw device buffer, and timing with CUDA events
// around each call on one stream (untimed warm-up calls first, the median of the timed ones), in two
// ways: isolated calls (the host waits for each; the time includes the host's work of the call, from
// its first API call to the launch) and calls enqueued back to back (the host runs ahead, so that only
// the GPU's time is measured, as in a loop of many calls), each timed alone or all together.
#pragma once

#include <cuda_runtime_api.h>

#include <algorithm>
#include <functional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace bench {

inline void cuda_ok(cudaError_t status, const char* what) {
    if (status != cudaSuccess)
        throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(status));
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

inline double median_of(std::vector<float> times) {
    std::sort(times.begin(), times.end());
    return times[times.size() / 2];
}

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
    return median_of(std::move(times));
}

// Median milliseconds of the GPU time of `runs` calls of `call` enqueued back to back after `warmup`
// untimed ones, each preceded by `before` (untimed, e.g. an L2 flush: L2Flush). The host waits once, at
// the end; `before` gives it time to enqueue the next call while the GPU works.
inline double stream_median_ms(const std::function<void()>& call, int runs,
                               const std::function<void()>& before, int warmup = 3,
                               cudaStream_t stream = nullptr) {
    for (int i = 0; i < warmup; ++i) {
        before();
        call();
    }
    std::vector<cudaEvent_t> starts(static_cast<std::size_t>(runs)), stops(static_cast<std::size_t>(runs));
    for (int i = 0; i < runs; ++i) {
        cuda_ok(cudaEventCreate(&starts[static_cast<std::size_t>(i)]), "cudaEventCreate");
        cuda_ok(cudaEventCreate(&stops[static_cast<std::size_t>(i)]), "cudaEventCreate");
    }
    for (int i = 0; i < runs; ++i) {
        before();
        cuda_ok(cudaEventRecord(starts[static_cast<std::size_t>(i)], stream), "cudaEventRecord");
        call();
        cuda_ok(cudaEventRecord(stops[static_cast<std::size_t>(i)], stream), "cudaEventRecord");
    }
    cuda_ok(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
    std::vector<float> times;
    for (int i = 0; i < runs; ++i) {
        float ms = 0;
        cuda_ok(cudaEventElapsedTime(&ms, starts[static_cast<std::size_t>(i)],
                                     stops[static_cast<std::size_t>(i)]),
                "cudaEventElapsedTime");
        times.push_back(ms);
        cudaEventDestroy(starts[static_cast<std::size_t>(i)]);
        cudaEventDestroy(stops[static_cast<std::size_t>(i)]);
    }
    return median_of(std::move(times));
}

// Milliseconds per call of `runs` calls enqueued back to back between one pair of events, after
// `warmup` untimed ones: the steady state of a loop, where a call also pays the writes that the call
// before it left in L2 (and may find some of that call's data there when its data is not much larger
// than the L2).
inline double steady_ms(const std::function<void()>& call, int runs, int warmup = 3,
                        cudaStream_t stream = nullptr) {
    for (int i = 0; i < warmup; ++i)
        call();
    cudaEvent_t start, stop;
    cuda_ok(cudaEventCreate(&start), "cudaEventCreate");
    cuda_ok(cudaEventCreate(&stop), "cudaEventCreate");
    cuda_ok(cudaEventRecord(start, stream), "cudaEventRecord");
    for (int i = 0; i < runs; ++i)
        call();
    cuda_ok(cudaEventRecord(stop, stream), "cudaEventRecord");
    cuda_ok(cudaEventSynchronize(stop), "cudaEventSynchronize");
    float ms = 0;
    cuda_ok(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime");
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    return ms / runs;
}

} // namespace bench
