// The RG-LRU of Hawk / Griffin (De et al. 2024), fused with its gates, on the GPU:
//
//   r_t = sigmoid(gate_a_t),  i_t = sigmoid(gate_x_t)
//   log a_t = -8 r_t softplus(Lambda),  a_t = exp(log a_t)
//   h_t = a_t h_{t-1} + sqrt(1 - a_t^2) (i_t x_t),   h_{-1} = h0 (or 0)
//
// Layout: B*R sequences (rows) of L steps, time contiguous; row s belongs to channel s % channels
// (rows ordered batch-major, channel-minor: a [B, R, L] tensor seen as [B*R, L]). Hawk's [B, L, R]
// activations must be transposed first. x, gate_a, gate_x, h and their gradients are row tensors
// [B*R, L] (rows.hpp: any row stride >= L) of the problem's dtype (fp32 or bf16); Lambda [R], the
// states h0 and h_last [B*R] and their gradients are dense fp32; the arithmetic and the carried state
// are fp32. Calls are asynchronous on `stream`; nothing is allocated and nothing synchronises. Bad
// arguments throw ShapeError naming the tensor, fp16 UnsupportedError, as does a build without CUDA.
//
// The backward recomputes the gates from the inputs (it saves only the inputs and h). The gradient of
// sqrt(u), u = 1 - a^2, is clipped at 1000 (as recurrentgemma's SqrtBoundDerivative): near a = 1
// the true derivative a / sqrt(1 - a^2) is unbounded. d_lambda is reduced over batch and time by a
// block reduction per row and one atomic addition per row (so its last bits may vary between runs);
// it is overwritten, not accumulated into.
//
//   rglru::Problem problem{DType::bf16, {.batch = B, .channels = R, .length = L}};
//   rglru::forward(problem, {.x = {x, DType::bf16, {B * R, L}}, ..., .lambda = {lambda, DType::fp32, {R}},
//                            .h = {h, DType::bf16, {B * R, L}}}, {}, stream);
#pragma once

#include <optional>

#include "flashrnn/core/dtype.hpp"
#include "flashrnn/core/stream.hpp"
#include "flashrnn/core/tensor.hpp"
#include "flashrnn/scan/shape.hpp"
#include "flashrnn/tiling/scan_launch.hpp"

namespace flashrnn::rglru {

struct Problem {
    DType dtype = DType::fp32;
    RglruShape shape;
};

struct ForwardArgs {
    ConstTensorView x, gate_a, gate_x; // [B*R, L] rows, the problem's dtype
    ConstTensorView lambda;            // fp32 [R]
    ConstTensorView h0;                // fp32 [B*R]; optional (absent: zero initial state)
    TensorView h;                      // out [B*R, L]
    TensorView h_last;                 // out, fp32 [B*R]; optional
};

struct BackwardArgs {
    ConstTensorView x, gate_a, gate_x; // the forward's inputs
    ConstTensorView lambda;            // fp32 [R]
    ConstTensorView h0;                // as in the forward (optional)
    ConstTensorView h;                 // the forward's output [B*R, L]
    ConstTensorView dh;                // gradient of the loss w.r.t. h, [B*R, L]
    ConstTensorView dh_last;           // w.r.t. h_last, fp32 [B*R]; optional (absent: zero)
    TensorView dx, d_gate_a, d_gate_x; // out [B*R, L]
    TensorView d_lambda;               // out, fp32 [R], overwritten; required
    TensorView dh0;                    // out, fp32 [B*R]; optional
};

struct Options {
    // A forced configuration (tests, benchmarks): one of kRglruDomains; else the model's. Vector
    // access on unaligned rows falls back to shared access.
    std::optional<ScanConfig> config;
};

void forward(const Problem& problem, const ForwardArgs& args, const Options& options, Stream stream);
void backward(const Problem& problem, const BackwardArgs& args, const Options& options, Stream stream);

} // namespace flashrnn::rglru
