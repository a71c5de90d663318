// Tiling: the GPU's limits (read from the device or from presets) and the ConstrINT models that choose
// each kernel family's configuration from them, with their explanations when nothing fits.
#pragma once

#include "flashrnn/tiling/device_limits.hpp"
#include "flashrnn/tiling/fused_tiling.hpp"
#include "flashrnn/tiling/scan_launch.hpp"
