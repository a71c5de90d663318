// The alternating backend (FlashRNN paper, section 5.2): per time step one batched matrix product
// over heads through cuBLAS (fp32 accumulation) and one fused pointwise kernel of the cell. Backward:
// per step the pointwise derivative kernel and the R^T product; then dR as one product over all steps
// and the bias gradient as a parallel column reduction.
//
// Called through rnn::forward / rnn::backward (passes.hpp) with Backend::alternating (or automatic).
// Calls can be captured in a CUDA graph once the calling thread has made one call outside capture
// (that call creates its cuBLAS handle). This header has what is particular to the backend.
//
// Graphs kept for repeated calls: a pass is a few thousand launches (two per time step), more host
// work than GPU work at small sizes. So a call on a stream that is not being captured records its
// launches once into a CUDA graph (on a stream of the backend's, then launched on the caller's) and
// later calls with the same shape, dtype, cell, policy and pointers replay it. A few sets of pointers
// get a graph each; once a shape has them, calls with other pointers (a training loop that allocates
// new tensors on every call) replay one graph over buffers of the backend's own, their inputs copied
// in and outputs copied out on the caller's stream (a few percent of the pass's time, against a new
// capture per call). The results are bitwise those of direct launches. A call on a stream that is
// being captured (the caller's own graph) launches directly. Graphs are kept per thread and device, a
// bounded number (see docs/kernels.md); FLASHRNN_ALTERNATING_GRAPHS=0 in the environment or
// set_graph_reuse(false) turns them off.
#pragma once

#include <cstddef>
#include <cstdint>

namespace flashrnn::alternating {

// Whether calls keep and replay graphs, for every thread from now on (initially: on, unless the
// environment variable FLASHRNN_ALTERNATING_GRAPHS is 0, off, false or no).
void set_graph_reuse(bool enabled);
bool graph_reuse();

// What the calling thread's calls on the current device did with graphs since its first call.
struct GraphReuseStats {
    std::uint64_t made = 0;     // captured and instantiated a new graph
    std::uint64_t staged = 0;   // replayed the shape's graph over the backend's buffers (copied in and out)
    std::uint64_t replayed = 0; // replayed a kept graph as it was
    std::uint64_t direct = 0;   // launched directly: reuse off, or the stream was being captured
    std::size_t kept = 0;       // graphs kept now
};
GraphReuseStats graph_reuse_stats();

// Drops the calling thread's kept graphs and staged buffers on the current device (launches in flight
// complete).
void release_graphs();

} // namespace flashrnn::alternating
