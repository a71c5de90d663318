// One recurrent problem: the cell, the element type, and the sizes -- T time steps, B sequences, NH
// independent heads of DH units.
#pragma once

#include <cstdint>
#include <string>

#include "flashrnn/cells/registry.hpp"
#include "flashrnn/core/dtype.hpp"

namespace flashrnn {

// Order of the two outer dimensions of the gate inputs (and their gradient); everything else is
// time-major. See docs/kernels.md.
enum class SequenceLayout {
    time_major,  // [T, B, G, NH, DH]
    batch_first, // [B, T, G, NH, DH]
};

struct ProblemShape {
    std::int64_t time_steps = 0; // T
    std::int64_t batch = 0;      // B
    std::int64_t heads = 0;      // NH
    std::int64_t head_dim = 0;   // DH
    SequenceLayout gate_input_layout = SequenceLayout::time_major;
};

// "T=3, B=2, NH=4, DH=16, time-major"
std::string to_string(const ProblemShape& problem);

// Throws ShapeError unless every size is at least 1 and every tensor of the problem, for any cell,
// has at most kMaxTensorElements elements (core/tensor_size.hpp).
void validate(const ProblemShape& problem);

} // namespace flashrnn

namespace flashrnn::rnn {

// What every pass of every backend is called with (passes.hpp).
struct Problem {
    Cell cell = Cell::lstm;
    DType dtype = DType::bf16;
    ProblemShape shape;
};

// "lstm bf16, T=3, B=2, NH=4, DH=16, time-major"
std::string to_string(const Problem& problem);

} // namespace flashrnn::rnn
