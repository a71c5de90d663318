#include "flashrnn/rnn/tensor_shapes.hpp"

namespace flashrnn {

NamedShape gate_inputs_shape(const CellInfo& cell, const ProblemShape& p) {
    const NamedExtent gates{"G_in", cell.num_input_gates}, heads{"NH", p.heads}, dim{"DH", p.head_dim};
    if (p.gate_input_layout == SequenceLayout::batch_first)
        return {{"B", p.batch}, {"T", p.time_steps}, gates, heads, dim};
    return {{"T", p.time_steps}, {"B", p.batch}, gates, heads, dim};
}

NamedShape recurrent_weights_shape(const CellInfo& cell, const ProblemShape& p) {
    return {{"G_rec", cell.num_recurrent_gates}, {"NH", p.heads}, {"DH", p.head_dim}, {"DH", p.head_dim}};
}

NamedShape bias_shape(const CellInfo& cell, const ProblemShape& p) {
    return {{"G", cell.num_gates}, {"NH", p.heads}, {"DH", p.head_dim}};
}

NamedShape states_shape(const CellInfo& cell, const ProblemShape& p) {
    return {{"S", cell.num_states}, {"B", p.batch}, {"NH", p.heads}, {"DH", p.head_dim}};
}

NamedShape state_sequence_shape(const CellInfo& cell, const ProblemShape& p) {
    return {{"S", cell.num_states},
            {"T+1", p.time_steps + 1},
            {"B", p.batch},
            {"NH", p.heads},
            {"DH", p.head_dim}};
}

std::vector<std::int64_t> sizes_of(const NamedShape& shape) {
    std::vector<std::int64_t> sizes;
    sizes.reserve(static_cast<std::size_t>(shape.rank()));
    for (const NamedExtent& extent : shape.extents())
        sizes.push_back(extent.size);
    return sizes;
}

GateInputsLayout gate_inputs_layout(const CellInfo& cell, const ProblemShape& p) {
    return {p.time_steps, p.batch,    cell.num_input_gates,
            p.heads,      p.head_dim, p.gate_input_layout == SequenceLayout::batch_first};
}

RecurrentWeightsLayout recurrent_weights_layout(const CellInfo& cell, const ProblemShape& p) {
    return {cell.num_recurrent_gates, p.heads, p.head_dim};
}

BiasLayout bias_layout(const CellInfo& cell, const ProblemShape& p) {
    return {cell.num_gates, p.heads, p.head_dim};
}

StatesLayout states_layout(const CellInfo& cell, const ProblemShape& p) {
    return {cell.num_states, p.batch, p.heads, p.head_dim};
}

StateSequenceLayout state_sequence_layout(const CellInfo& cell, const ProblemShape& p) {
    return {cell.num_states, p.time_steps, p.batch, p.heads, p.head_dim};
}

} // namespace flashrnn
