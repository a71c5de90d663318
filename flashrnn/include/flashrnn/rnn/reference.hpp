// The CPU float64 reference of the recurrent cells: forward and backpropagation through time over
// the layouts of docs/kernels.md. It is the oracle the CUDA kernels are tested against, written for
// clarity: per step one product per (recurrent gate, head) through Eigen, then the cell's pointwise
// function -- the same header the kernels use.
#pragma once

#include <optional>
#include <vector>

#include "flashrnn/cells/registry.hpp"
#include "flashrnn/core/host_tensor.hpp"
#include "flashrnn/rnn/problem.hpp"
#include "flashrnn/rnn/recurrent_gradient.hpp"

namespace flashrnn::reference {

struct ForwardInputs {
    ConstHostView gate_inputs;       // Wx  [T, B, G_in, NH, DH] (or batch-first)
    ConstHostView recurrent_weights; // R   [G_rec, NH, DH, DH]
    ConstHostView bias;              // b   [G, NH, DH]
    ConstHostView initial_states;    // s_0 [S, B, NH, DH]
};

struct ForwardOutputs {
    MutableHostView states;     // [S, T+1, B, NH, DH], index 0 = initial states
    MutableHostView last_state; // [S, B, NH, DH]
};

void forward(Cell cell, const ProblemShape& problem, const ForwardInputs& inputs,
             const ForwardOutputs& outputs);

struct BackwardInputs {
    ConstHostView gate_inputs;
    ConstHostView recurrent_weights;
    ConstHostView bias;
    ConstHostView states; // the forward's output [S, T+1, B, NH, DH]
    // Gradients of the loss with respect to the forward's outputs; absent means zero.
    std::optional<ConstHostView> d_states;     // [S, T+1, B, NH, DH]
    std::optional<ConstHostView> d_last_state; // [S, B, NH, DH]
};

struct BackwardOutputs { // overwritten, same shapes as the corresponding inputs
    MutableHostView d_gate_inputs;
    MutableHostView d_recurrent_weights;
    MutableHostView d_bias;
    MutableHostView d_initial_states;
};

void backward(Cell cell, const ProblemShape& problem, const BackwardInputs& inputs,
              const BackwardOutputs& outputs, RecurrentGradient policy = RecurrentGradient::full());

// Owning results, for callers that do not manage buffers.
struct Tensor {
    std::vector<double> values;
    std::vector<std::int64_t> shape;

    ConstHostView view() const { return {values, shape}; }
    MutableHostView view() { return {values, shape}; }
};

struct ForwardResult {
    Tensor states;
    Tensor last_state;
};

struct BackwardResult {
    Tensor d_gate_inputs;
    Tensor d_recurrent_weights;
    Tensor d_bias;
    Tensor d_initial_states;
};

ForwardResult forward(Cell cell, const ProblemShape& problem, const ForwardInputs& inputs);
BackwardResult backward(Cell cell, const ProblemShape& problem, const BackwardInputs& inputs,
                        RecurrentGradient policy = RecurrentGradient::full());

} // namespace flashrnn::reference
