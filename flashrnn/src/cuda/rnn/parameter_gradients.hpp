// dR and db from the gate gradients of every step, once the time loop is done: dR as one cuBLAS
// product over all (t, b) rows, db as a deterministic two-pass column reduction. Shared by the
// alternating and the fused backward.
#pragma once

#include "cuda/rnn/workspace.hpp"
#include "flashrnn/cells/registry.hpp"
#include "flashrnn/core/dtype.hpp"
#include "flashrnn/core/stream.hpp"
#include "flashrnn/rnn/problem.hpp"

namespace flashrnn::alternating {

struct ParameterGradientWorkspace {
    float* d_weights; // [NH, G_rec, DH, DH]
    float* bias_sums; // partial column sums
};

ParameterGradientWorkspace plan_parameter_gradients(WorkspacePlan& plan, Cell cell, const ProblemShape& p);

// d_gates: [T, B, NH, G, DH] in dtype, slot order; states: the forward's [S, T+1, B, NH, DH].
void parameter_gradients(Cell cell, const ProblemShape& p, DType dtype, const void* d_gates,
                         const void* states, const ParameterGradientWorkspace& w, void* d_recurrent_weights,
                         void* d_bias, Stream stream);

} // namespace flashrnn::alternating
