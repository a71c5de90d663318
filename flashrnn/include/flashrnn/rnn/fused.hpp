// The fused backend (FlashRNN paper, sections 5.1-5.4): one persistent kernel per pass covers every
// time step. R (forward) or R^T (backward) is loaded once into registers and shared memory, the states
// stay on chip, the recurrent product runs on the tensor cores (mma.sync, fp32 accumulation; tf32 for
// fp32) and the cell's pointwise function is fused after it. A head split over several blocks sends
// each step's state (gate gradients backward) to its other blocks through a step exchange whose
// words carry their step, so no barrier is needed (a cooperative launch makes them resident together).
//
// The kernels' tiling is the solution of the ConstrINT model of flashrnn/tiling/fused_tiling.hpp for the
// current GPU and problem; the kernel is compiled for it at run time with NVRTC (cached on disk), and a
// configuration that spills or cannot launch is fed back to the model, which is solved again. The backward's
// dR and db are one cuBLAS product over all steps and a two-pass column reduction, as in the alternating
// backend.
//
// Called through rnn::forward / rnn::backward (passes.hpp) with Backend::fused (or automatic); a
// fused forward's gate cache feeds an alternating backward and the other way round. Once prepare()
// (or one call) has compiled and loaded the kernels for a problem, calls for it can be captured in a
// CUDA graph.
#pragma once

#include "flashrnn/rnn/problem.hpp"
#include "flashrnn/tiling/fused_tiling.hpp"

namespace flashrnn::fused {

// The configuration a pass runs with on the current GPU: the solver's choice after the compiler's
// feedback. Compiles and loads the kernel when it is not loaded yet (may take a second; cached on
// disk). Throws TilingError when no configuration exists for the problem on this GPU.
FusedKernelTraits traits(const rnn::Problem& problem, FusedPass pass);

// Compiles and loads both passes' kernels for a problem (call before capturing a graph).
void prepare(const rnn::Problem& problem);

} // namespace flashrnn::fused
