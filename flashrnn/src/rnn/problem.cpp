#include "flashrnn/rnn/problem.hpp"

#include "flashrnn/core/error.hpp"

namespace flashrnn {

std::string to_string(const ProblemShape& problem) {
    return "T=" + std::to_string(problem.time_steps) + ", B=" + std::to_string(problem.batch) +
           ", NH=" + std::to_string(problem.heads) + ", DH=" + std::to_string(problem.head_dim) + ", " +
           (problem.gate_input_layout == SequenceLayout::batch_first ? "batch-first" : "time-major");
}

void validate(const ProblemShape& problem) {
    if (problem.time_steps < 1 || problem.batch < 1 || problem.heads < 1 || problem.head_dim < 1)
        throw ShapeError("flashrnn: every problem size must be at least 1, got " + to_string(problem));
}

} // namespace flashrnn

namespace flashrnn::rnn {

std::string to_string(const Problem& problem) {
    return std::string(cell_info(problem.cell).name) + " " + std::string(flashrnn::to_string(problem.dtype)) +
           ", " + flashrnn::to_string(problem.shape);
}

} // namespace flashrnn::rnn
