#include "flashrnn/newton/problem.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>

#include "flashrnn/core/error.hpp"
#include "flashrnn/core/tensor_size.hpp"
#include "flashrnn/scan/shape.hpp"

namespace flashrnn::newton {
namespace {

std::string prefix(std::string_view call) {
    return "flashrnn::" + std::string(call) + ": ";
}

TensorRequirement dense(DType dtype, NamedShape shape) {
    return {dtype, shape, TensorRequirement::Strides::dense};
}

// The problem's shape and dtype, and the call named with the problem ("newton::forward(flash_gru, bf16)").
std::string check_problem(std::string_view call, const Problem& problem) {
    const std::string named = std::string(call) + "(" + std::string(to_string(problem.cell)) + ", " +
                              std::string(to_string(problem.dtype)) + ")";
    validate(named, problem.shape);
    if (problem.dtype != DType::fp32 && problem.dtype != DType::bf16)
        throw UnsupportedError(prefix(named) + "the Newton solvers take fp32 or bf16 tensors");
    return "flashrnn::" + named;
}

// The most gate, state or parameter rows of any cell: the shape is checked for all of them.
std::int64_t largest_row_count() {
    int largest = 1;
    for (Cell cell : all_cells) {
        const CellInfo info = cell_info(cell);
        largest = std::max({largest, info.num_gates, info.num_states, info.num_parameters});
    }
    return largest;
}

} // namespace

std::string to_string(const Shape& shape) {
    return "T=" + std::to_string(shape.time_steps) + ", B=" + std::to_string(shape.batch) +
           ", D=" + std::to_string(shape.units);
}

std::string to_string(const Problem& problem) {
    return std::string(to_string(problem.cell)) + " " + std::string(to_string(problem.dtype)) + ", " +
           to_string(problem.shape);
}

void validate(std::string_view call, const Shape& shape) {
    if (shape.batch < 1 || shape.units < 1)
        throw ShapeError(prefix(call) + "batch and units must be at least 1, got B=" +
                         std::to_string(shape.batch) + ", D=" + std::to_string(shape.units));
    if (shape.time_steps < 1 || shape.time_steps > kMaxScanLength)
        throw ShapeError(prefix(call) + "the number of time steps must be in [1, " +
                         std::to_string(kMaxScanLength) + "], got T=" + std::to_string(shape.time_steps));
    // The largest tensors: [G, B, D, T], [S, B, D, T] and [P, D], for the cell with the most rows.
    if (!fits_tensor({largest_row_count(), shape.batch, shape.units, shape.time_steps}))
        throw ShapeError(prefix(call) + "the problem's tensors would exceed " +
                         std::to_string(kMaxTensorElements) + " elements (2^60 - 1), got " +
                         to_string(shape));
}

std::string_view to_string(Backend backend) {
    switch (backend) {
    case Backend::automatic:
        return "automatic";
    case Backend::newton:
        return "newton";
    case Backend::sequential:
        return "sequential";
    case Backend::fused:
        return "fused";
    }
    throw ShapeError("flashrnn::newton: invalid Backend value " + std::to_string(static_cast<int>(backend)));
}

Backend parse_backend(std::string_view name) {
    for (Backend backend : {Backend::automatic, Backend::newton, Backend::sequential, Backend::fused})
        if (to_string(backend) == name) return backend;
    throw UnsupportedError("flashrnn::newton: unknown backend '" + std::string(name) +
                           "' (automatic, newton, sequential or fused)");
}

void check_workspace(std::string_view call, const Workspace& workspace, std::size_t needed) {
    if (needed == 0) return;
    if (!workspace.data || workspace.bytes < needed)
        throw ShapeError(prefix(call) + "the workspace holds " +
                         std::to_string(workspace.data ? workspace.bytes : 0) + " bytes, it needs " +
                         std::to_string(needed));
    if (reinterpret_cast<std::uintptr_t>(workspace.data) % 16 != 0)
        throw ShapeError(prefix(call) + "workspace must be 16-byte aligned (cudaMalloc gives 256)");
}

void validate(std::string_view call, const Options& options) {
    if (options.max_iterations < 1)
        throw ShapeError(prefix(call) + "the iteration limit must be at least 1, got " +
                         std::to_string(options.max_iterations));
    if (options.tolerance) {
        const Tolerance& t = *options.tolerance;
        const bool valid = std::isfinite(t.absolute) && std::isfinite(t.relative) && t.absolute >= 0 &&
                           t.relative >= 0 && (t.absolute > 0 || t.relative > 0);
        if (!valid)
            throw ShapeError(prefix(call) +
                             "a tolerance needs finite, non-negative parts, not both zero; got absolute " +
                             std::to_string(t.absolute) + ", relative " + std::to_string(t.relative));
    }
}

NamedShape inputs_shape(const CellInfo& cell, const Shape& shape) {
    return {{"G", cell.num_gates}, {"B", shape.batch}, {"D", shape.units}, {"T", shape.time_steps}};
}

NamedShape parameters_shape(const CellInfo& cell, const Shape& shape) {
    return {{"P", cell.num_parameters}, {"D", shape.units}};
}

NamedShape state_shape(const CellInfo& cell, const Shape& shape) {
    return {{"S", cell.num_states}, {"B", shape.batch}, {"D", shape.units}};
}

NamedShape state_sequence_shape(const CellInfo& cell, const Shape& shape) {
    return {{"S", cell.num_states}, {"B", shape.batch}, {"D", shape.units}, {"T", shape.time_steps}};
}

namespace {

// The tensors both passes read: the forward's inputs and its states.
void check_inputs_and_states(const std::string& named, const Problem& problem, const ConstTensorView& inputs,
                             const ConstTensorView& parameters, const ConstTensorView& initial_state,
                             const ConstTensorView& states) {
    const CellInfo cell = cell_info(problem.cell);
    const Shape& s = problem.shape;
    check_tensor(named, "inputs", inputs, dense(problem.dtype, inputs_shape(cell, s)));
    check_tensor(named, "parameters", parameters, dense(DType::fp32, parameters_shape(cell, s)));
    check_optional_tensor(named, "initial_state", initial_state, dense(DType::fp32, state_shape(cell, s)));
    check_tensor(named, "states", states, dense(problem.dtype, state_sequence_shape(cell, s)));
}

} // namespace

void check_forward_args(std::string_view call, const Problem& problem, const ForwardArgs& args) {
    const std::string named = check_problem(call, problem);
    check_inputs_and_states(named, problem, args.inputs, args.parameters, args.initial_state, args.states);
    const NamedShape state = state_shape(cell_info(problem.cell), problem.shape);
    check_optional_tensor(named, "last_state", args.last_state, dense(DType::fp32, state));
    check_optional_tensor(named, "statistics", args.statistics,
                          dense(DType::fp32, {{"statistics", kStatisticsElements}}));
}

void check_backward_args(std::string_view call, const Problem& problem, const BackwardArgs& args) {
    const std::string named = check_problem(call, problem);
    check_inputs_and_states(named, problem, args.inputs, args.parameters, args.initial_state, args.states);
    const CellInfo cell = cell_info(problem.cell);
    const Shape& s = problem.shape;
    check_optional_tensor(named, "d_states", args.d_states,
                          dense(problem.dtype, state_sequence_shape(cell, s)));
    check_optional_tensor(named, "d_last_state", args.d_last_state, dense(DType::fp32, state_shape(cell, s)));
    check_tensor(named, "d_inputs", args.d_inputs, dense(problem.dtype, inputs_shape(cell, s)));
    check_tensor(named, "d_parameters", args.d_parameters, dense(DType::fp32, parameters_shape(cell, s)));
    check_optional_tensor(named, "d_initial_state", args.d_initial_state,
                          dense(DType::fp32, state_shape(cell, s)));
}

} // namespace flashrnn::newton
