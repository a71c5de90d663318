// DeviceLimits without the CUDA runtime: only presets are available.
#include "flashrnn/core/error.hpp"
#include <stdexcept>
#include <string>

#include "flashrnn/tiling/device_limits.hpp"

namespace flashrnn {

DeviceLimits device_limits_of(int device_index) {
    throw UnsupportedError("flashrnn: cannot read CUDA device " + std::to_string(device_index) +
                           ": built without the CUDA runtime; use flashrnn::preset(name) instead");
}

} // namespace flashrnn
