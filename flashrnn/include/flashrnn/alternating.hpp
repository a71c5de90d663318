// The alternating backend (FlashRNN paper, section 5.2): per time step one batched matrix product
// over heads through cuBLAS (fp32 accumulation) and one fused pointwise kernel of the cell. Backward:
// per step the pointwise derivative kernel and the R^T product; then dR as one product over all steps
// and the bias gradient as a parallel column reduction.
//
// All pointers are device pointers to dense tensors in the layouts of docs/kernels.md, every tensor in
// the element type `dtype` (fp32, bf16 or fp16; the arithmetic is fp32). Calls are asynchronous on the
// caller's stream, never synchronise the device, allocate nothing and can be captured in a CUDA graph
// once the calling thread has made one call outside capture (that call creates its cuBLAS handle).
#pragma once

#include <cstddef>

#include "flashrnn/cells/registry.hpp"
#include "flashrnn/cuda_stream.hpp"
#include "flashrnn/dtype.hpp"
#include "flashrnn/problem_shape.hpp"
#include "flashrnn/recurrent_gradient.hpp"

namespace flashrnn::alternating {

struct ForwardArgs {
    const void* gate_inputs = nullptr;       // Wx  [T, B, G_in, NH, DH] (or batch-first)
    const void* recurrent_weights = nullptr; // R   [G_rec, NH, DH, DH]
    const void* bias = nullptr;              // b   [G, NH, DH]
    const void* initial_states = nullptr;    // s_0 [S, B, NH, DH]
    void* states = nullptr;                  // out [S, T+1, B, NH, DH]
    void* last_state = nullptr;              // out [S, B, NH, DH]; optional
    // out, fp32 whatever dtype: the gate pre-activations the backward needs, gate_cache_elements()
    // floats in the backend's own order. Optional; leave it null for inference.
    void* gate_cache = nullptr;
};

struct BackwardArgs {
    const void* recurrent_weights = nullptr; // R [G_rec, NH, DH, DH]
    const void* states = nullptr;            // the forward's states [S, T+1, B, NH, DH]
    const void* gate_cache = nullptr;        // the forward's gate cache (fp32)
    const void* d_states = nullptr;          // optional upstream gradient [S, T+1, B, NH, DH]
    const void* d_last_state = nullptr;      // optional upstream gradient [S, B, NH, DH]
    void* d_gate_inputs = nullptr;           // out, layout of Wx
    void* d_recurrent_weights = nullptr;     // out [G_rec, NH, DH, DH]
    void* d_bias = nullptr;                  // out [G, NH, DH]
    void* d_initial_states = nullptr;        // out [S, B, NH, DH]
};

// Elements of the forward's gate cache for a cell and problem.
std::size_t gate_cache_elements(Cell cell, const ProblemShape& problem);

// Device memory the calls need besides their tensors (256-byte aligned is enough).
std::size_t forward_workspace_bytes(Cell cell, const ProblemShape& problem, DType dtype);
std::size_t backward_workspace_bytes(Cell cell, const ProblemShape& problem, DType dtype);

// Throw ShapeError (a std::invalid_argument) for a bad shape, a missing tensor or a workspace that is
// too small, and std::runtime_error for CUDA or cuBLAS failures (with the failing call's message).
void forward(Cell cell, const ProblemShape& problem, DType dtype, const ForwardArgs& args, void* workspace,
             std::size_t workspace_bytes, Stream stream);
void backward(Cell cell, const ProblemShape& problem, DType dtype, const BackwardArgs& args,
              RecurrentGradient policy, void* workspace, std::size_t workspace_bytes, Stream stream);

} // namespace flashrnn::alternating
