// The alternating backend's kernels outside the time loop: R in head-major order for the per-head
// products, dR back to the API layout, and the bias gradient as a two-pass column reduction over all
// steps (deterministic, no atomics).
#pragma once

#include <cstdint>

#include "flashrnn/core/dtype.hpp"
#include "flashrnn/core/stream.hpp"

namespace flashrnn::alternating {

struct WeightShape {
    std::int64_t recurrent_gates, heads, head_dim;
};

// R [G_rec, NH, DH, DH] -> [NH, G_rec, DH, DH], same element type.
void reorder_weights_head_major(DType dtype, WeightShape shape, const void* weights, void* head_major,
                                Stream stream);

// fp32 [NH, G_rec, DH, DH] -> dtype [G_rec, NH, DH, DH].
void weights_gradient_to_api_layout(DType dtype, WeightShape shape, const float* head_major, void* d_weights,
                                    Stream stream);

// d_bias[gate_of_slot[slot], h, d] = sum over rows of d_gates[row, h, slot, d], where d_gates is a
// [rows, NH, slots, DH] buffer in dtype and d_bias is [G, NH, DH] in dtype.
struct BiasGradientShape {
    std::int64_t rows, heads, slots, head_dim;
    int gate_of_slot[8];
};
std::int64_t bias_gradient_partial_sums(const BiasGradientShape& shape); // floats of workspace
void bias_gradient(DType dtype, const BiasGradientShape& shape, const void* d_gates, float* partial_sums,
                   void* d_bias, Stream stream);

} // namespace flashrnn::alternating
