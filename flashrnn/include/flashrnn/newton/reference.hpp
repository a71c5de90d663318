// float64 CPU references of the Newton family, the oracle of its GPU kernels: the sequential forward
// and backward of the diagonal cells, the Newton solver (paper Alg. 1a) and the reduction (Alg. 1b).
// Tensors are HostViews in the layouts of newton/problem.hpp and newton/reduction.hpp; each is
// checked against its expected shape first (ShapeError naming the call and the tensor), inputs
// against non-finite values (NumericalError naming the tensor and the position).
#pragma once

#include <optional>

#include "flashrnn/core/host_tensor.hpp"
#include "flashrnn/newton/problem.hpp"
#include "flashrnn/newton/reduction.hpp"
#include "flashrnn/rnn/reference.hpp"

namespace flashrnn::reference {

// How a reduction is solved: `sequential` by forward substitution; `prefix` as the GPU does, in
// chunks of `chunk_size` equations solved by forward substitution, a Hillis-Steele scan over the
// chunks' composed maps (the doubling steps of Alg. 1b), then each chunk from its predecessor's value.
enum class ReductionMethod { sequential, prefix };

struct NewtonInputs {
    ConstHostView inputs;                       // [G, B, D, T]
    ConstHostView parameters;                   // [P, D]
    std::optional<ConstHostView> initial_state; // [S, B, D]; absent: zero
};

struct NewtonForwardResult {
    Tensor states;                 // [S, B, D, T]
    Tensor last_state;             // [S, B, D]
    newton::Statistics statistics; // of newton_solve; the sequential forward reports 0 iterations
};

// h_t = f(h_{t-1}, x_t), one step after the other.
NewtonForwardResult newton_sequential_forward(newton::Cell cell, const newton::Shape& shape,
                                              const NewtonInputs& inputs);

// Newton's method on the system h_t - f(h_{t-1}, x_t) = 0 (paper eqs. 2-4). Initial guess (eq. 10):
// h_t^0 = f(0, x_t), except h_1^0 = f(h_0, x_1) (exact). Each iteration evaluates the residuals
// r_t = f(h_{t-1}, x_t) - h_t and the Jacobians at the current iterate and adds the solution of the
// reduction x_t = J_t x_{t-1} + r_t. Each sequence (batch row, unit) iterates on its own (see
// newton::Options). Throws NumericalError when a residual is not finite.
NewtonForwardResult newton_solve(newton::Cell cell, const newton::Shape& shape, const NewtonInputs& inputs,
                                 const newton::Options& options,
                                 ReductionMethod method = ReductionMethod::sequential, int chunk_size = 2);

struct NewtonBackwardInputs {
    NewtonInputs forward;
    ConstHostView states;                      // the forward's states [S, B, D, T]
    std::optional<ConstHostView> d_states;     // [S, B, D, T]; absent: zero
    std::optional<ConstHostView> d_last_state; // [S, B, D]; absent: zero
};

struct NewtonGradients {
    Tensor d_inputs;        // [G, B, D, T]
    Tensor d_parameters;    // [P, D]
    Tensor d_initial_state; // [S, B, D]
};

// Paper eq. 6: g_t = d_states_t (+ d_last_state at t = T) + J_{t+1}^T g_{t+1}, solved as one reverse
// reduction, then per step the cell's gradients of its inputs and parameters at g_t; the initial
// state's gradient is J_1^T g_1.
NewtonGradients newton_backward(newton::Cell cell, const newton::Shape& shape,
                                const NewtonBackwardInputs& inputs,
                                ReductionMethod method = ReductionMethod::sequential, int chunk_size = 2);

// The public reduction (newton/reduction.hpp) in float64; problem.dtype is not used. Returns the
// solution [N, sequences, L].
Tensor newton_reduce(const newton::ReductionProblem& problem, ConstHostView jacobians, ConstHostView rhs,
                     ReductionMethod method = ReductionMethod::sequential, int chunk_size = 2);

} // namespace flashrnn::reference
