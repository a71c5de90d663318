// The boundary of the GPU passes: every tensor checked against the problem (shape, dtype, density,
// alignment), the workspace against the chosen backend's size, then the backend runs.
#include "flashrnn/rnn/passes.hpp"

#include <cstdint>
#include <string>

#include "flashrnn/core/error.hpp"
#include "flashrnn/rnn/tensor_shapes.hpp"
#include "rnn/backends.hpp"

namespace flashrnn::rnn {
namespace {

std::string context_of(const char* pass, const Problem& problem, Backend backend) {
    return std::string("flashrnn::rnn::") + pass + "(" + std::string(cell_info(problem.cell).name) + ", " +
           std::string(flashrnn::to_string(problem.dtype)) + ", " + std::string(to_string(backend)) + ")";
}

// The gate cache is fp32, read in packets of up to 16 bytes.
TensorRequirement gate_cache_requirement(const Problem& problem) {
    return {DType::fp32,
            {{"gate cache elements", static_cast<std::int64_t>(gate_cache_elements(problem))}},
            TensorRequirement::Strides::dense,
            16};
}

// The workspace holds fp32 buffers read in packets of up to 16 bytes.
void check_workspace(const std::string& context, const Workspace& workspace, std::size_t needed) {
    if (workspace.bytes < needed || (needed > 0 && !workspace.data))
        throw ShapeError(context + ": the workspace holds " +
                         std::to_string(workspace.data ? workspace.bytes : 0) + " bytes, it needs " +
                         std::to_string(needed));
    if (reinterpret_cast<std::uintptr_t>(workspace.data) % 16 != 0)
        throw ShapeError(context + ": workspace must be 16-byte aligned (cudaMalloc gives 256)");
}

void check_forward(const std::string& context, const Problem& problem, const ForwardArgs& args) {
    const CellInfo info = cell_info(problem.cell);
    const ProblemShape& p = problem.shape;
    const DType dtype = problem.dtype;
    check_tensor(context, "gate_inputs", args.gate_inputs, {dtype, gate_inputs_shape(info, p)});
    check_tensor(context, "recurrent_weights", args.recurrent_weights,
                 {dtype, recurrent_weights_shape(info, p)});
    check_tensor(context, "bias", args.bias, {dtype, bias_shape(info, p)});
    check_tensor(context, "initial_states", args.initial_states, {dtype, states_shape(info, p)});
    check_tensor(context, "states", args.states, {dtype, state_sequence_shape(info, p)});
    check_optional_tensor(context, "last_state", args.last_state, {dtype, states_shape(info, p)});
    check_optional_tensor(context, "gate_cache", args.gate_cache, gate_cache_requirement(problem));
}

void check_backward(const std::string& context, const Problem& problem, const BackwardArgs& args) {
    const CellInfo info = cell_info(problem.cell);
    const ProblemShape& p = problem.shape;
    const DType dtype = problem.dtype;
    check_tensor(context, "recurrent_weights", args.recurrent_weights,
                 {dtype, recurrent_weights_shape(info, p)});
    check_tensor(context, "states", args.states, {dtype, state_sequence_shape(info, p)});
    if (!args.gate_cache.present())
        throw ShapeError(context +
                         ": gate_cache is null (required: the forward's, from a call with gate_cache set)");
    check_tensor(context, "gate_cache", args.gate_cache, gate_cache_requirement(problem));
    check_optional_tensor(context, "d_states", args.d_states, {dtype, state_sequence_shape(info, p)});
    check_optional_tensor(context, "d_last_state", args.d_last_state, {dtype, states_shape(info, p)});
    check_tensor(context, "d_gate_inputs", args.d_gate_inputs, {dtype, gate_inputs_shape(info, p)});
    check_tensor(context, "d_recurrent_weights", args.d_recurrent_weights,
                 {dtype, recurrent_weights_shape(info, p)});
    check_tensor(context, "d_bias", args.d_bias, {dtype, bias_shape(info, p)});
    check_tensor(context, "d_initial_states", args.d_initial_states, {dtype, states_shape(info, p)});
}

} // namespace

std::size_t gate_cache_elements(const Problem& problem) {
    validate(problem.shape);
    const ProblemShape& p = problem.shape;
    return static_cast<std::size_t>(p.time_steps * p.batch * p.heads * p.head_dim *
                                    cell_info(problem.cell).num_gates);
}

std::size_t forward_workspace_bytes(const Problem& problem, const Options& options) {
    validate(problem.shape);
    return resolve_backend(problem, options.backend, FusedPass::forward) == Backend::fused
               ? fused::forward_workspace_bytes(problem)
               : alternating::forward_workspace_bytes(problem);
}

std::size_t backward_workspace_bytes(const Problem& problem, const Options& options) {
    validate(problem.shape);
    return resolve_backend(problem, options.backend, FusedPass::backward) == Backend::fused
               ? fused::backward_workspace_bytes(problem)
               : alternating::backward_workspace_bytes(problem);
}

void forward(const Problem& problem, const ForwardArgs& args, const Options& options, Stream stream) {
    validate(problem.shape);
    const Backend backend = resolve_backend(problem, options.backend, FusedPass::forward);
    const std::string context = context_of("forward", problem, backend);
    check_forward(context, problem, args);
    if (backend == Backend::fused) {
        check_workspace(context, args.workspace, fused::forward_workspace_bytes(problem));
        fused::forward(problem, args, stream);
    } else {
        check_workspace(context, args.workspace, alternating::forward_workspace_bytes(problem));
        alternating::forward(problem, args, stream);
    }
}

void backward(const Problem& problem, const BackwardArgs& args, const Options& options, Stream stream) {
    validate(problem.shape);
    validate(options.recurrent_gradient);
    const Backend backend = resolve_backend(problem, options.backend, FusedPass::backward);
    const std::string context = context_of("backward", problem, backend);
    check_backward(context, problem, args);
    if (backend == Backend::fused) {
        check_workspace(context, args.workspace, fused::backward_workspace_bytes(problem));
        fused::backward(problem, args, options.recurrent_gradient, stream);
    } else {
        check_workspace(context, args.workspace, alternating::backward_workspace_bytes(problem));
        alternating::backward(problem, args, options.recurrent_gradient, stream);
    }
}

} // namespace flashrnn::rnn
