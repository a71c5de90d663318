// newton::forward and newton::backward on the GPU (newton/passes.hpp): the checks, the backend, the
// workspace's layout (one function per pass computes every offset) and the launches.
#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>

#include "cuda/common/cuda_check.hpp"
#include "cuda/common/device.hpp"
#include "cuda/newton/fused_backward_launch.hpp"
#include "cuda/newton/fused_launch.hpp"
#include "cuda/newton/kernels.cuh"
#include "cuda/newton/problem_dispatch.cuh"
#include "cuda/newton/reduction_launch.hpp"
#include "cuda/newton/sequential.cuh"
#include "flashrnn/core/error.hpp"
#include "flashrnn/newton/passes.hpp"

namespace flashrnn::newton {

namespace {

using cuda::newton::BackwardParams;
using cuda::newton::Counters;
using cuda::newton::ForwardParams;
using cuda::newton::kElementThreads;
using cuda::newton::kSequentialThreads;
using cuda::newton::Rows;
using cuda::newton::rows_of;
using cuda::newton::visit_problem;

constexpr const char* kForward = "newton::forward";
constexpr const char* kBackward = "newton::backward";

std::size_t aligned(std::size_t bytes) {
    return (bytes + 255) / 256 * 256;
}

ReductionProblem reduction_of(const Problem& problem, bool reverse) {
    const int S = cell_info(problem.cell).num_states;
    return {DType::fp32, S == 2 ? JacobianStructure::block2x2 : JacobianStructure::diagonal,
            ScanShape{problem.shape.sequences(), problem.shape.time_steps}, reverse};
}

// Byte offsets into the forward's workspace (Newton backend; the sequential one needs none).
struct ForwardLayout {
    ReductionLaunch reduction;
    std::size_t iterate = 0, jacobians = 0, residuals = 0;             // fp32 [S | S*S | S, sequences, T]
    std::size_t met_at = 0, sequence_residual = 0, sequence_state = 0; // [sequences], with a tolerance
    std::size_t counters = 0, reduction_workspace = 0, bytes = 0;
};

ForwardLayout forward_layout(const Problem& problem, Backend backend) {
    ForwardLayout layout;
    if (backend == Backend::fused) { // the statistics' counters only
        layout.bytes = aligned(sizeof(Counters));
        return layout;
    }
    if (backend != Backend::newton) return layout;
    const auto S = static_cast<std::size_t>(cell_info(problem.cell).num_states);
    const auto plane = static_cast<std::size_t>(problem.shape.sequences() * problem.shape.time_steps) * 4;
    const auto per_sequence = static_cast<std::size_t>(problem.shape.sequences()) * 4;
    layout.reduction = cuda::newton::reduction_launch(reduction_of(problem, false));
    std::size_t at = 0;
    const auto take = [&](std::size_t bytes) {
        const std::size_t offset = at;
        at += aligned(bytes);
        return offset;
    };
    layout.iterate = take(S * plane);
    layout.jacobians = take(S * S * plane);
    layout.residuals = take(S * plane);
    layout.met_at = take(per_sequence);
    layout.sequence_residual = take(per_sequence);
    layout.sequence_state = take(per_sequence);
    layout.counters = take(sizeof(Counters));
    layout.reduction_workspace = take(layout.reduction.workspace_bytes);
    layout.bytes = at;
    return layout;
}

// Byte offsets into the backward's workspace (Newton backend).
struct BackwardLayout {
    ReductionLaunch reduction;
    std::size_t transposed = 0, carries = 0, reduction_workspace = 0, bytes = 0;
};

BackwardLayout backward_layout(const Problem& problem, Backend backend) {
    BackwardLayout layout;
    if (backend != Backend::newton) return layout;
    const auto S = static_cast<std::size_t>(cell_info(problem.cell).num_states);
    const auto plane = static_cast<std::size_t>(problem.shape.sequences() * problem.shape.time_steps) * 4;
    layout.reduction = cuda::newton::reduction_launch(reduction_of(problem, true));
    layout.transposed = 0;
    layout.carries = aligned(S * S * plane);
    layout.reduction_workspace = layout.carries + aligned(S * plane);
    layout.bytes = layout.reduction_workspace + aligned(layout.reduction.workspace_bytes);
    return layout;
}

unsigned element_blocks(const Problem& problem) {
    const std::int64_t elements = problem.shape.sequences() * problem.shape.time_steps;
    const std::int64_t blocks = (elements + kElementThreads - 1) / kElementThreads;
    if (blocks > 2147483647)
        throw ShapeError("flashrnn::newton: " + to_string(problem.shape) +
                         " has more elements than one launch covers");
    return static_cast<unsigned>(blocks);
}

unsigned sequential_blocks(const Problem& problem) {
    return static_cast<unsigned>((problem.shape.sequences() + newton::kSequentialTileSequences - 1) /
                                 newton::kSequentialTileSequences);
}

template <class T> const T* typed(const ConstTensorView& view) {
    return static_cast<const T*>(view.data);
}
template <class T> T* typed(const TensorView& view) {
    return static_cast<T*>(view.data);
}

void check_options(const std::string& call, const Options& options) {
    validate(call, options);
    if (options.max_iterations > 16777216)
        throw ShapeError("flashrnn::" + call + ": at most 2^24 iterations (counted in fp32 statistics)");
}

template <class C, class T>
void newton_forward(const Problem& problem, const ForwardArgs& args, const Options& options,
                    const ForwardLayout& layout, Stream stream) {
    auto* base = static_cast<unsigned char*>(args.workspace.data);
    const auto at = [&](std::size_t offset) { return base + offset; };
    const bool tolerance = options.tolerance.has_value();
    const std::int64_t sequences = problem.shape.sequences();
    const ForwardParams<T> p{typed<T>(args.inputs),
                             typed<float>(args.parameters),
                             typed<float>(args.initial_state),
                             reinterpret_cast<float*>(at(layout.iterate)),
                             reinterpret_cast<float*>(at(layout.jacobians)),
                             reinterpret_cast<float*>(at(layout.residuals)),
                             typed<T>(args.states),
                             typed<float>(args.last_state),
                             tolerance ? reinterpret_cast<unsigned*>(at(layout.sequence_residual)) : nullptr,
                             tolerance ? reinterpret_cast<unsigned*>(at(layout.sequence_state)) : nullptr,
                             reinterpret_cast<Counters*>(at(layout.counters)),
                             rows_of(problem)};
    int* met_at = tolerance ? reinterpret_cast<int*>(at(layout.met_at)) : nullptr;
    cuda::check(cudaMemsetAsync(p.counters, 0, sizeof(Counters), stream),
                "cudaMemsetAsync (newton counters)");
    if (tolerance) {
        const auto bytes = static_cast<std::size_t>(sequences) * 4;
        cuda::check(cudaMemsetAsync(met_at, 0xFF, bytes, stream), "cudaMemsetAsync (newton met_at)");
        cuda::check(cudaMemsetAsync(p.sequence_residual, 0, bytes, stream), "cudaMemsetAsync");
        cuda::check(cudaMemsetAsync(p.sequence_state, 0, bytes, stream), "cudaMemsetAsync");
    }
    const unsigned blocks = element_blocks(problem);
    const unsigned conclude_blocks = static_cast<unsigned>((sequences + 255) / 256);
    const auto conclude = [&](int iterations) {
        if (!tolerance) return;
        cuda::newton::conclude_kernel<<<conclude_blocks, 256, 0, stream>>>(
            met_at, p.sequence_residual, p.sequence_state, sequences,
            static_cast<float>(options.tolerance->absolute), static_cast<float>(options.tolerance->relative),
            iterations);
        cuda::check_launch("newton conclude_kernel");
    };
    cuda::newton::initial_guess_kernel<C, T><<<blocks, kElementThreads, 0, stream>>>(p);
    cuda::check_launch("newton initial_guess_kernel");
    const ReductionProblem reduction = reduction_of(problem, false);
    for (int iteration = 0; iteration < options.max_iterations; ++iteration) {
        cuda::newton::evaluate_kernel<C, T, false><<<blocks, kElementThreads, 0, stream>>>(p);
        cuda::check_launch("newton evaluate_kernel");
        conclude(iteration);
        cuda::newton::reduce_fp32(reduction, layout.reduction, p.jacobians, p.residuals, p.iterate, true,
                                  met_at, at(layout.reduction_workspace), stream);
    }
    cuda::newton::evaluate_kernel<C, T, true><<<blocks, kElementThreads, 0, stream>>>(p);
    cuda::check_launch("newton evaluate_kernel (last)");
    conclude(options.max_iterations);
    if (args.statistics.data) {
        cuda::newton::statistics_kernel<<<1, 256, 0, stream>>>(typed<float>(args.statistics), p.counters,
                                                               met_at, sequences, options.max_iterations);
        cuda::check_launch("newton statistics_kernel");
    }
}

void fused_forward(const Problem& problem, const ForwardArgs& args, const Options& options, Stream stream) {
    Counters* counters = args.statistics.data ? static_cast<Counters*>(args.workspace.data) : nullptr;
    if (counters)
        cuda::check(cudaMemsetAsync(counters, 0, sizeof(Counters), stream),
                    "cudaMemsetAsync (newton counters)");
    cuda::newton::fused_forward(problem, args, options, counters, stream);
    if (counters) {
        cuda::newton::fused_statistics_kernel<<<1, 1, 0, stream>>>(
            typed<float>(args.statistics), counters, options.max_iterations, options.tolerance.has_value());
        cuda::check_launch("newton fused_statistics_kernel");
    }
}

template <class C, class T>
void sequential_forward(const Problem& problem, const ForwardArgs& args, const Options& options,
                        Stream stream) {
    float* statistics = typed<float>(args.statistics);
    if (statistics) {
        cuda::newton::sequential_statistics_kernel<<<1, 1, 0, stream>>>(statistics,
                                                                        options.tolerance.has_value());
        cuda::check_launch("newton sequential_statistics_kernel");
    }
    const ForwardParams<T> p{typed<T>(args.inputs),
                             typed<float>(args.parameters),
                             typed<float>(args.initial_state),
                             nullptr,
                             nullptr,
                             nullptr,
                             typed<T>(args.states),
                             typed<float>(args.last_state),
                             nullptr,
                             nullptr,
                             nullptr,
                             rows_of(problem)};
    cuda::newton::sequential_forward_kernel<C, T>
        <<<sequential_blocks(problem), kSequentialThreads, 0, stream>>>(p, statistics);
    cuda::check_launch("newton sequential_forward_kernel");
}

// The backward kernels add their parameters' gradients into d_parameters.
void zero_parameter_gradients(const BackwardArgs& args, Stream stream) {
    cuda::check(cudaMemsetAsync(args.d_parameters.data, 0,
                                static_cast<std::size_t>(args.d_parameters.sizes.product()) * 4, stream),
                "cudaMemsetAsync (d_parameters)");
}

template <class C, class T>
void run_backward(const Problem& problem, const BackwardArgs& args, Backend backend,
                  const BackwardLayout& layout, Stream stream) {
    auto* base = static_cast<unsigned char*>(args.workspace.data);
    const BackwardParams<T> p{
        typed<T>(args.inputs),
        typed<float>(args.parameters),
        typed<float>(args.initial_state),
        typed<T>(args.states),
        typed<T>(args.d_states),
        typed<float>(args.d_last_state),
        backend == Backend::newton ? reinterpret_cast<float*>(base + layout.transposed) : nullptr,
        backend == Backend::newton ? reinterpret_cast<float*>(base + layout.carries) : nullptr,
        typed<T>(args.d_inputs),
        typed<float>(args.d_parameters),
        typed<float>(args.d_initial_state),
        rows_of(problem)};
    zero_parameter_gradients(args, stream);
    if (backend == Backend::sequential) {
        cuda::newton::sequential_backward_kernel<C, T>
            <<<sequential_blocks(problem), kSequentialThreads, 0, stream>>>(p);
        cuda::check_launch("newton sequential_backward_kernel");
        return;
    }
    const unsigned blocks = element_blocks(problem);
    cuda::newton::backward_system_kernel<C, T><<<blocks, kElementThreads, 0, stream>>>(p);
    cuda::check_launch("newton backward_system_kernel");
    cuda::newton::reduce_fp32(reduction_of(problem, true), layout.reduction, p.transposed, p.carries,
                              p.carries, false, nullptr, base + layout.reduction_workspace, stream);
    cuda::newton::backward_gradients_kernel<C, T><<<blocks, kElementThreads, 0, stream>>>(p);
    cuda::check_launch("newton backward_gradients_kernel");
}

} // namespace

Backend resolve_backend(const Problem& problem, const Options& options) {
    validate("newton::resolve_backend", problem.shape);
    return choose_backend(cuda::limits_of_current_device(), problem, options);
}

Backend resolve_backward_backend(const Problem& problem, const Options& options) {
    validate("newton::resolve_backward_backend", problem.shape);
    return choose_backward_backend(cuda::limits_of_current_device(), problem, options);
}

std::size_t forward_workspace_bytes(const Problem& problem, const Options& options) {
    validate("newton::forward_workspace_bytes", problem.shape);
    validate("newton::forward_workspace_bytes", options);
    return forward_layout(problem, resolve_backend(problem, options)).bytes;
}

std::size_t backward_workspace_bytes(const Problem& problem, const Options& options) {
    validate("newton::backward_workspace_bytes", problem.shape);
    return backward_layout(problem, resolve_backward_backend(problem, options)).bytes;
}

void forward(const Problem& problem, const ForwardArgs& args, const Options& options, Stream stream) {
    check_forward_args(kForward, problem, args);
    check_options(kForward, options);
    const Backend backend = resolve_backend(problem, options);
    const ForwardLayout layout = forward_layout(problem, backend);
    check_workspace(kForward, args.workspace, layout.bytes);
    if (backend == Backend::fused) {
        fused_forward(problem, args, options, stream);
        return;
    }
    visit_problem(problem, [&]<class C, class T>() {
        if (backend == Backend::newton)
            newton_forward<C, T>(problem, args, options, layout, stream);
        else
            sequential_forward<C, T>(problem, args, options, stream);
    });
}

void backward(const Problem& problem, const BackwardArgs& args, const Options& options, Stream stream) {
    check_backward_args(kBackward, problem, args);
    const Backend backend = resolve_backward_backend(problem, options);
    const BackwardLayout layout = backward_layout(problem, backend);
    check_workspace(kBackward, args.workspace, layout.bytes);
    if (backend == Backend::fused) {
        zero_parameter_gradients(args, stream);
        cuda::newton::fused_backward(problem, args, options, stream);
        return;
    }
    visit_problem(problem,
                  [&]<class C, class T>() { run_backward<C, T>(problem, args, backend, layout, stream); });
}

} // namespace flashrnn::newton
