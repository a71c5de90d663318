#include "cuda/common/device.hpp"
#include "flashrnn/core/error.hpp"

#include <array>
#include <mutex>

#include "cuda/common/cuda_check.hpp"
#include "flashrnn/core/stream.hpp"

namespace flashrnn {

bool cuda_device_available() {
    int count = 0;
    return cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
}

namespace cuda {

int current_device() {
    int device = 0;
    check(cudaGetDevice(&device), "cudaGetDevice");
    return device;
}

const DeviceLimits& limits_of_current_device() {
    static std::mutex mutex;
    static std::array<std::optional<DeviceLimits>, 64> cache;
    const int device = current_device();
    std::lock_guard lock(mutex);
    if (device < 0 || device >= static_cast<int>(cache.size()))
        throw DeviceError("flashrnn: CUDA device index " + std::to_string(device) + " out of range");
    if (!cache[device]) cache[device] = device_limits_of(device);
    return *cache[device];
}

} // namespace cuda
} // namespace flashrnn
