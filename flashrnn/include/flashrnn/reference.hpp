// The CPU float64 reference of the recurrent cells: forward and backpropagation through time over
// the layouts of docs/kernels.md. It is the oracle the CUDA kernels are tested against, written for
// clarity: per step one product per (recurrent gate, head) through Eigen, then the cell's pointwise
// function -- the same header the kernels use.
#pragma once

#include <optional>
#include <vector>

#include "flashrnn/cells/registry.hpp"
#include "flashrnn/problem_shape.hpp"
#include "flashrnn/recurrent_gradient.hpp"
#include "flashrnn/tensor_view.hpp"

namespace flashrnn::reference {

struct ForwardInputs {
    ConstTensorView gate_inputs;       // Wx  [T, B, G_in, NH, DH] (or batch-first)
    ConstTensorView recurrent_weights; // R   [G_rec, NH, DH, DH]
    ConstTensorView bias;              // b   [G, NH, DH]
    ConstTensorView initial_states;    // s_0 [S, B, NH, DH]
};

struct ForwardOutputs {
    MutableTensorView states;     // [S, T+1, B, NH, DH], index 0 = initial states
    MutableTensorView last_state; // [S, B, NH, DH]
};

void forward(Cell cell, const ProblemShape& problem, const ForwardInputs& inputs,
             const ForwardOutputs& outputs);

struct BackwardInputs {
    ConstTensorView gate_inputs;
    ConstTensorView recurrent_weights;
    ConstTensorView bias;
    ConstTensorView states; // the forward's output [S, T+1, B, NH, DH]
    // Gradients of the loss with respect to the forward's outputs; absent means zero.
    std::optional<ConstTensorView> d_states;     // [S, T+1, B, NH, DH]
    std::optional<ConstTensorView> d_last_state; // [S, B, NH, DH]
};

struct BackwardOutputs { // overwritten, same shapes as the corresponding inputs
    MutableTensorView d_gate_inputs;
    MutableTensorView d_recurrent_weights;
    MutableTensorView d_bias;
    MutableTensorView d_initial_states;
};

void backward(Cell cell, const ProblemShape& problem, const BackwardInputs& inputs,
              const BackwardOutputs& outputs, RecurrentGradient policy = RecurrentGradient::full());

// Owning results, for callers that do not manage buffers.
struct Tensor {
    std::vector<double> values;
    std::vector<std::int64_t> shape;

    ConstTensorView view() const { return {values, shape}; }
    MutableTensorView view() { return {values, shape}; }
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
