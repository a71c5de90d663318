// The RG-LRU of Hawk / Griffin (De et al. 2024), fused with its gates, on the GPU:
//
//   r_t = sigmoid(gate_a_t),  i_t = sigmoid(gate_x_t)
//   log a_t = -8 r_t softplus(Lambda),  a_t = exp(log a_t)
//   h_t = a_t h_{t-1} + sqrt(1 - a_t^2) (i_t x_t),   h_{-1} = h0 (or 0)
//
// Layout: B*R sequences (rows) of L steps, time contiguous; row s belongs to channel s % channels
// (rows ordered batch-major, channel-minor: a [B, R, L] tensor). Hawk's [B, L, R] activations must be
// transposed first. x, gate_a, gate_x and h have the caller's dtype (fp32 or bf16); Lambda, the
// states h0 and h_last and their gradients are fp32; the arithmetic and the carried state are fp32.
//
// The backward recomputes the gates from the inputs (it saves only the inputs and h). The gradient of
// sqrt(u), u = 1 - a^2, is clipped at 1000 (as recurrentgemma's SqrtBoundDerivative): near a = 1
// the true derivative a / sqrt(1 - a^2) is unbounded. d_lambda is reduced over batch and time by a
// block reduction per row and one atomic addition per row (so its last bits may vary between runs);
// it is overwritten, not accumulated into.
#pragma once

#include "flashrnn/cuda_stream.hpp"
#include "flashrnn/dtype.hpp"
#include "flashrnn/rglru_math.hpp"
#include "flashrnn/scan.hpp"
#include "flashrnn/scan_launch.hpp"

#include <optional>
#include <string_view>

namespace flashrnn {

struct RglruShape {
    std::int64_t batch = 0;
    std::int64_t channels = 0; // R: the width of Lambda
    std::int64_t length = 0;   // L: time steps
    ScanShape scan() const { return {batch * channels, length}; }
};

// Throws std::invalid_argument naming `call` for no batch, no channels or a bad scan shape (scan.hpp);
// shared by the kernels and the CPU reference.
void check_rglru_shape(std::string_view call, const RglruShape& shape);

struct RglruForwardArgs {
    ConstRows x, gate_a, gate_x;      // [B*R, L]
    const float* lambda = nullptr;    // [R]
    const float* h0 = nullptr;        // [B*R] or null (zero initial state)
    Rows h;                           // [B*R, L] output
    float* h_last = nullptr;          // [B*R] or null
    std::optional<ScanConfig> config; // forced (tests, benchmarks): one of kRglruDomains; else the model's
};

struct RglruBackwardArgs {
    ConstRows x, gate_a, gate_x; // the forward's inputs
    const float* lambda = nullptr;
    const float* h0 = nullptr;        // as in the forward
    ConstRows h;                      // the forward's output
    ConstRows dh;                     // gradient of the loss w.r.t. h, [B*R, L]
    const float* dh_last = nullptr;   // w.r.t. h_last, or null
    Rows dx, d_gate_a, d_gate_x;      // outputs, [B*R, L]
    float* d_lambda = nullptr;        // [R], overwritten
    float* dh0 = nullptr;             // [B*R] or null
    std::optional<ScanConfig> config; // as in the forward
};

void rglru_forward(DType dtype, const RglruShape& shape, const RglruForwardArgs& args, Stream stream);
void rglru_backward(DType dtype, const RglruShape& shape, const RglruBackwardArgs& args, Stream stream);

} // namespace flashrnn
