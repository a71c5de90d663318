#include "flashrnn/rnn/problem.hpp"

#include "flashrnn/core/error.hpp"
#include "flashrnn/core/tensor_size.hpp"

#include <algorithm>

namespace flashrnn {

std::string to_string(const ProblemShape& problem) {
    return "T=" + std::to_string(problem.time_steps) + ", B=" + std::to_string(problem.batch) +
           ", NH=" + std::to_string(problem.heads) + ", DH=" + std::to_string(problem.head_dim) + ", " +
           (problem.gate_input_layout == SequenceLayout::batch_first ? "batch-first" : "time-major");
}

namespace {

// The most gates and states of any cell: the shape is checked for all of them.
int largest_gate_or_state_count() {
    int largest = 1;
    for (Cell cell : all_cells)
        largest = std::max({largest, cell_info(cell).num_gates, cell_info(cell).num_states});
    return largest;
}

} // namespace

void validate(const ProblemShape& problem) {
    const std::int64_t T = problem.time_steps, B = problem.batch, NH = problem.heads, DH = problem.head_dim;
    if (T < 1 || B < 1 || NH < 1 || DH < 1)
        throw ShapeError("flashrnn: every problem size must be at least 1, got " + to_string(problem));
    // The largest tensors: the gate inputs [T, B, G, NH, DH], the states over time [S, T+1, B, NH, DH]
    // and the recurrent weights [G, NH, DH, DH]. T + 1 is only formed once T * ... has fitted.
    const std::int64_t rows = largest_gate_or_state_count();
    if (!fits_tensor({rows, T, B, NH, DH}) || !fits_tensor({rows, T + 1, B, NH, DH}) ||
        !fits_tensor({rows, NH, DH, DH}))
        throw ShapeError("flashrnn: the problem's tensors would exceed " +
                         std::to_string(kMaxTensorElements) + " elements (2^60 - 1), got " +
                         to_string(problem));
}

} // namespace flashrnn

namespace flashrnn::rnn {

std::string to_string(const Problem& problem) {
    return std::string(cell_info(problem.cell).name) + " " + std::string(flashrnn::to_string(problem.dtype)) +
           ", " + flashrnn::to_string(problem.shape);
}

} // namespace flashrnn::rnn
