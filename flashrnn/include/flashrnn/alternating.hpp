// The alternating backend (FlashRNN paper, section 5.2): per time step one batched matrix product
// over heads through cuBLAS (fp32 accumulation) and one fused pointwise kernel of the cell. Backward:
// per step the pointwise derivative kernel and the R^T product; then dR as one product over all steps
// and the bias gradient as a parallel column reduction.
//
// All pointers are device pointers to dense tensors in the layouts of docs/kernels.md, every tensor in
// the element type `dtype` (fp32, bf16 or fp16; the arithmetic is fp32). Calls are asynchronous on the
// caller's stream, never synchronise the device, allocate nothing and can be captured in a CUDA graph
// once the calling thread has made one call outside capture (that call creates its cuBLAS handle).
//
// Graphs kept for repeated calls: a pass is a few thousand launches (two per time step), more host
// work than GPU work at small sizes. So a call on a stream that is not being captured records its
// launches once into a CUDA graph (on a stream of the backend's, then launched on the caller's) and
// later calls with the same shape, dtype, cell, policy and pointers replay it; new pointers re-capture
// and update the graph. The results are bitwise those of direct launches. A call on a stream that is
// being captured (the caller's own graph) launches directly. Graphs are kept per thread and device, a
// bounded number (see docs/kernels.md); FLASHRNN_ALTERNATING_GRAPHS=0 in the environment or
// set_graph_reuse(false) turns them off.
#pragma once

#include <cstddef>
#include <cstdint>

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

// Whether calls keep and replay graphs, for every thread from now on (initially: on, unless the
// environment variable FLASHRNN_ALTERNATING_GRAPHS is 0, off, false or no).
void set_graph_reuse(bool enabled);
bool graph_reuse();

// What the calling thread's calls on the current device did with graphs since its first call.
struct GraphReuseStats {
    std::uint64_t made = 0;      // captured and instantiated a new graph
    std::uint64_t refreshed = 0; // re-captured with new pointers and updated a kept graph
    std::uint64_t replayed = 0;  // replayed a kept graph as it was
    std::uint64_t direct = 0;    // launched directly: reuse off, or the stream was being captured
    std::size_t kept = 0;        // graphs kept now
};
GraphReuseStats graph_reuse_stats();

// Drops the calling thread's kept graphs on the current device (launches in flight complete).
void release_graphs();

} // namespace flashrnn::alternating
