// The current CUDA device and its limits, read once per device and process.
#pragma once

#include <optional>

#include "flashrnn/tiling/device_limits.hpp"

namespace flashrnn::cuda {

int current_device();
const DeviceLimits& limits_of_current_device();

} // namespace flashrnn::cuda
