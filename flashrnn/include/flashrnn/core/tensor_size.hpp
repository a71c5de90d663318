// The largest tensor the API accepts, and the overflow-free test of a shape against it: every
// problem's validate function checks its tensors' sizes with fits_tensor, so that element counts,
// byte sizes and offsets never overflow (issue 23: T = 2^62 overflowed the layouts' offsets).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <limits>

namespace flashrnn {

// The most elements a tensor of the API may have, so that its size in bytes (float64 included: the
// CPU reference) and every offset into it fit a signed 64-bit integer: 2^60 - 1.
inline constexpr std::int64_t kMaxTensorElements = std::numeric_limits<std::int64_t>::max() / 8;

// Whether the product of these sizes, each at least 1, is at most kMaxTensorElements; tested
// without forming a product that overflows.
constexpr bool fits_tensor(std::initializer_list<std::int64_t> sizes) {
    std::int64_t product = 1;
    for (std::int64_t size : sizes) {
        if (size < 1 || product > kMaxTensorElements / size) return false;
        product *= size;
    }
    return true;
}

} // namespace flashrnn
