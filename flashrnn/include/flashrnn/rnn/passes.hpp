// The forward and backward passes of a recurrent network on the GPU, one calling convention for
// every backend: a problem (cell, dtype, sizes), an arguments struct of tensor views checked at the
// boundary (each wrong tensor is named with its expected and actual shape and dtype), options, and
// the caller's CUDA stream.
//
// Tensors are dense row-major in the layouts of docs/kernels.md, every tensor in the problem's dtype
// (fp32, bf16 or fp16; the arithmetic is fp32) except the gate cache, which is fp32. Calls are
// asynchronous on the stream, never synchronise the device and allocate nothing; the workspace is the
// caller's. A forward's gate cache feeds a backward of either backend.
//
//   rnn::Problem problem{Cell::lstm, DType::bf16, {.time_steps = T, .batch = B, .heads = NH, .head_dim =
//   DH}}; rnn::ForwardArgs args{.gate_inputs = {wx, DType::bf16, {T, B, 4, NH, DH}}, ...,
//                         .workspace = {buffer, rnn::forward_workspace_bytes(problem)}};
//   rnn::forward(problem, args, {}, stream);
#pragma once

#include <cstddef>

#include "flashrnn/core/stream.hpp"
#include "flashrnn/core/tensor.hpp"
#include "flashrnn/rnn/backend.hpp"
#include "flashrnn/rnn/problem.hpp"
#include "flashrnn/rnn/recurrent_gradient.hpp"

namespace flashrnn::rnn {

struct ForwardArgs {
    ConstTensorView gate_inputs;       // Wx  [T, B, G_in, NH, DH] (or batch-first [B, T, ...])
    ConstTensorView recurrent_weights; // R   [G_rec, NH, DH, DH]
    ConstTensorView bias;              // b   [G, NH, DH]
    ConstTensorView initial_states;    // s_0 [S, B, NH, DH]
    TensorView states;                 // out [S, T+1, B, NH, DH], index 0 = s_0
    TensorView last_state;             // out [S, B, NH, DH]; optional
    // out, fp32 [gate_cache_elements(problem)], 16-byte aligned: the gate pre-activations the backward
    // needs. Optional; leave it absent for inference.
    TensorView gate_cache;
    Workspace workspace; // forward_workspace_bytes(problem, options)
};

struct BackwardArgs {
    ConstTensorView recurrent_weights; // R [G_rec, NH, DH, DH]
    ConstTensorView states;            // the forward's states [S, T+1, B, NH, DH]
    ConstTensorView gate_cache;        // the forward's gate cache (fp32)
    ConstTensorView d_states;          // optional upstream gradient [S, T+1, B, NH, DH]
    ConstTensorView d_last_state;      // optional upstream gradient [S, B, NH, DH]
    TensorView d_gate_inputs;          // out, the layout of Wx
    TensorView d_recurrent_weights;    // out [G_rec, NH, DH, DH]
    TensorView d_bias;                 // out [G, NH, DH]
    TensorView d_initial_states;       // out [S, B, NH, DH]
    Workspace workspace;               // backward_workspace_bytes(problem, options)
};

struct Options {
    Backend backend = Backend::automatic;
    // The backward's treatment of the gradient through R (ignored by the forward).
    RecurrentGradient recurrent_gradient = RecurrentGradient::full();
};

// Elements of the forward's gate cache.
std::size_t gate_cache_elements(const Problem& problem);

// Device memory the calls need besides their tensors, for the backend the options resolve to.
std::size_t forward_workspace_bytes(const Problem& problem, const Options& options = {});
std::size_t backward_workspace_bytes(const Problem& problem, const Options& options = {});

// Throw ShapeError for a bad problem, tensor or workspace; TilingError when the fused backend was
// asked for and the problem does not fit the GPU; DeviceError for CUDA, cuBLAS or NVRTC failures;
// UnsupportedError in a build without CUDA.
void forward(const Problem& problem, const ForwardArgs& args, const Options& options, Stream stream);
void backward(const Problem& problem, const BackwardArgs& args, const Options& options, Stream stream);

} // namespace flashrnn::rnn
