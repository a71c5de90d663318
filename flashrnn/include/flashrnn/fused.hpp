// The fused backend (FlashRNN paper, sections 5.1-5.4): one persistent kernel per pass covers every
// time step. R (forward) or R^T (backward) is loaded once into registers and shared memory, the states
// stay on chip, the recurrent product runs on the tensor cores (mma.sync, fp32 accumulation; tf32 for
// fp32) and the cell's pointwise function is fused after it. A head split over several blocks sends
// each step's state (gate gradients backward) to its other blocks through a step exchange whose
// words carry their step, so no barrier is needed (a cooperative launch makes them resident together).
//
// The kernels' tiling is the solution of the ConstrINT model of flashrnn/fused_tiling.hpp for the
// current GPU and problem; the kernel is compiled for it at run time with NVRTC (fused_compiler.hpp,
// cached on disk), and a configuration that spills or cannot launch is fed back to the model, which
// is solved again. The backward's dR and db are one cuBLAS product over all steps and a two-pass
// column reduction, as in the alternating backend.
//
// Tensors, layouts and the gate cache are those of the alternating backend (alternating.hpp): a
// fused forward's gate cache feeds an alternating backward and the other way round. Calls are
// asynchronous on the caller's stream, never synchronise the device and allocate nothing; once
// prepare() (or one call) has compiled and loaded the kernels for a problem, calls for it can be
// captured in a CUDA graph.
#pragma once

#include <cstddef>

#include "flashrnn/alternating.hpp"
#include "flashrnn/fused_tiling.hpp"

namespace flashrnn::fused {

using alternating::BackwardArgs;
using alternating::ForwardArgs;
using alternating::gate_cache_elements;

// The configuration a pass runs with on the current GPU: the solver's choice after the compiler's
// feedback. Compiles and loads the kernel when it is not loaded yet (may take a second; cached on
// disk). Throws FusedTilingError when no configuration exists for the problem on this GPU.
FusedKernelTraits traits(Cell cell, const ProblemShape& problem, DType dtype, FusedPass pass);

// Compiles and loads both passes' kernels for a problem (call before capturing a graph).
void prepare(Cell cell, const ProblemShape& problem, DType dtype);

// Device memory the calls need besides their tensors (256-byte aligned is enough).
std::size_t forward_workspace_bytes(Cell cell, const ProblemShape& problem, DType dtype);
std::size_t backward_workspace_bytes(Cell cell, const ProblemShape& problem, DType dtype);

// Throw ShapeError (a std::invalid_argument) for a bad shape, a missing tensor or a workspace that is
// too small, FusedTilingError when the problem does not fit the GPU, and std::runtime_error for
// CUDA, NVRTC or cuBLAS failures (with the failing call's message).
void forward(Cell cell, const ProblemShape& problem, DType dtype, const ForwardArgs& args, void* workspace,
             std::size_t workspace_bytes, Stream stream);
void backward(Cell cell, const ProblemShape& problem, DType dtype, const BackwardArgs& args,
              RecurrentGradient policy, void* workspace, std::size_t workspace_bytes, Stream stream);

} // namespace flashrnn::fused
