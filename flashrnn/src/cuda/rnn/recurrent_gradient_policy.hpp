// What a backward kernel does with R^T dg on its way to the previous h (flashrnn::RecurrentGradient,
// as the kernels see it; a cut gradient is not computed at all). Shared by the alternating kernels and
// the fused ones compiled by NVRTC: no library includes beyond host_device.hpp.
#pragma once

#include "flashrnn/detail/host_device.hpp"

namespace flashrnn::alternating {

struct RecurrentGradientPolicy {
    bool clip;
    float clip_value;
    FLASHRNN_HOST_DEVICE float apply(float through_r) const {
        if (!clip) return through_r;
        return through_r < -clip_value ? -clip_value : (through_r > clip_value ? clip_value : through_r);
    }
};

} // namespace flashrnn::alternating
