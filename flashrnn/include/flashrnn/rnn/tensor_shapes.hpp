// The expected shape of every API tensor for a cell and a problem, with the dimension names used in
// error messages, and the matching index layouts.
#pragma once

#include <vector>

#include "flashrnn/cells/registry.hpp"
#include "flashrnn/core/host_tensor.hpp"
#include "flashrnn/core/tensor.hpp"
#include "flashrnn/rnn/layout.hpp"
#include "flashrnn/rnn/problem.hpp"

namespace flashrnn {

NamedShape gate_inputs_shape(const CellInfo& cell, const ProblemShape& problem);
NamedShape recurrent_weights_shape(const CellInfo& cell, const ProblemShape& problem);
NamedShape bias_shape(const CellInfo& cell, const ProblemShape& problem);
NamedShape states_shape(const CellInfo& cell, const ProblemShape& problem); // [S, B, NH, DH]
NamedShape state_sequence_shape(const CellInfo& cell,
                                const ProblemShape& problem); // [S, T+1, ...]

// The extents alone, e.g. to allocate a tensor.
std::vector<std::int64_t> sizes_of(const NamedShape& shape);

GateInputsLayout gate_inputs_layout(const CellInfo& cell, const ProblemShape& problem);
RecurrentWeightsLayout recurrent_weights_layout(const CellInfo& cell, const ProblemShape& problem);
BiasLayout bias_layout(const CellInfo& cell, const ProblemShape& problem);
StatesLayout states_layout(const CellInfo& cell, const ProblemShape& problem);
StateSequenceLayout state_sequence_layout(const CellInfo& cell, const ProblemShape& problem);

} // namespace flashrnn
