// dR and db after the backward time loop (parameter_gradients.hpp).
#include "cuda/rnn/parameter_gradients.hpp"

#include "cuda/common/cublas_handle.hpp"
#include "cuda/rnn/auxiliary_kernels.hpp"
#include "cuda/rnn/gate_slots.hpp"
#include "cuda/rnn/recurrent_products.hpp"

namespace flashrnn::alternating {
namespace {

BiasGradientShape bias_gradient_shape(Cell cell, const ProblemShape& p) {
    BiasGradientShape shape{p.time_steps * p.batch, p.heads, cell_info(cell).num_gates, p.head_dim, {}};
    visit_cell(cell, [&]<class C>(C) {
        static_assert(C::num_gates <= 8, "BiasGradientShape holds at most 8 gates");
        for (int slot = 0; slot < C::num_gates; ++slot)
            shape.gate_of_slot[slot] = gate_of_slot<C>(slot);
    });
    return shape;
}

} // namespace

ParameterGradientWorkspace plan_parameter_gradients(WorkspacePlan& plan, Cell cell, const ProblemShape& p) {
    const CellInfo info = cell_info(cell);
    ParameterGradientWorkspace w;
    w.d_weights = plan.take<float>(info.num_recurrent_gates * p.heads * p.head_dim * p.head_dim);
    w.bias_sums = plan.take<float>(bias_gradient_partial_sums(bias_gradient_shape(cell, p)));
    return w;
}

void parameter_gradients(Cell cell, const ProblemShape& p, DType dtype, const void* d_gates,
                         const void* states, const ParameterGradientWorkspace& w, void* d_recurrent_weights,
                         void* d_bias, Stream stream) {
    const CellInfo info = cell_info(cell);
    const HeadProductShape products{p.batch, p.heads, info.num_recurrent_gates, info.num_gates, p.head_dim};
    // dR over all steps at once: rows (t, b) of d_gates against states[0, t] for t < T.
    weight_gradient_products(cuda::cublas_for(stream), dtype, products, p.time_steps * p.batch, d_gates,
                             states, w.d_weights);
    weights_gradient_to_api_layout(dtype, {info.num_recurrent_gates, p.heads, p.head_dim}, w.d_weights,
                                   d_recurrent_weights, stream);
    bias_gradient(dtype, bias_gradient_shape(cell, p), d_gates, w.bias_sums, d_bias, stream);
}

} // namespace flashrnn::alternating
