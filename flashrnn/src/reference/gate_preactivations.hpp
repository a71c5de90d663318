// Assembles a cell's gate pre-activations for one unit (b, h, d) at one step from the gate inputs, the
// recurrent products and the bias, following the cell's row-to-gate maps (see PointwiseCell).
#pragma once

#include "flashrnn/cells/registry.hpp"
#include "flashrnn/rnn/layout.hpp"
#include "recurrent_products.hpp"

namespace flashrnn::reference::detail {

struct GateSources {
    GateInputsLayout input_layout;
    const double* gate_inputs;
    RecurrentProducts products;
    const double* recurrent; // Y of this step, [B, G_rec, NH, DH]
    BiasLayout bias_layout;
    const double* bias;
};

template <PointwiseCell C>
void assemble_gates(const GateSources& src, std::int64_t t, std::int64_t b, std::int64_t h, std::int64_t d,
                    double* gates) {
    for (int g = 0; g < C::num_gates; ++g)
        gates[g] = src.bias[src.bias_layout.offset(g, h, d)];
    for (int k = 0; k < C::num_input_gates; ++k)
        gates[C::gate_of_input_row(k)] += src.gate_inputs[src.input_layout.offset(t, b, k, h, d)];
    for (int k = 0; k < C::num_recurrent_gates; ++k)
        gates[C::gate_of_recurrent_block(k)] += src.recurrent[src.products.offset(b, k, h, d)];
}

} // namespace flashrnn::reference::detail
