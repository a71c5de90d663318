// The Newton reduction on the GPU: the public newton::reduce (checks, then the launch) and the
// solvers' fp32 entry, both through the scan pipe's reduction clients (cuda/scan/reduction_clients.cuh).
#include <cstdint>
#include <type_traits>

#include <cuda_bf16.h>

#include "cuda/common/cuda_check.hpp"
#include "cuda/common/device.hpp"
#include "cuda/newton/reduction_launch.hpp"
#include "cuda/scan/config_dispatch.cuh"
#include "cuda/scan/reduction_clients.cuh"
#include "cuda/scan/scan_pipe.cuh"
#include "flashrnn/newton/problem.hpp"

namespace flashrnn::cuda::newton {

namespace {

using flashrnn::newton::JacobianStructure;
using flashrnn::newton::ReductionProblem;
using scan::Affine2x2;
using scan::ReductionParams;
using scan::ScalarAffine;

// The segment scan of the grid level: one configuration (a sequence has at most kReductionMaxSegments).
constexpr int kCarryElements = 4;
constexpr int kCarryThreads = 128;

ScanKernel kernel_of(JacobianStructure structure) {
    return structure == JacobianStructure::block2x2 ? ScanKernel::newton_reduce_2x2
                                                    : ScanKernel::newton_reduce_diagonal;
}

template <class T, class M, bool kAccumulate>
void run_pipes(const ReductionProblem& problem, const ReductionLaunch& launch, const T* jacobians,
               const T* rhs, T* solution, const int* skip, void* workspace, Stream stream) {
    const std::int64_t sequences = problem.shape.sequences;
    auto* words = static_cast<unsigned char*>(workspace);
    const bool grid = launch.segments > 1;
    ReductionParams<T> p{jacobians,
                         rhs,
                         solution,
                         sequences,
                         problem.shape.length,
                         sequences * launch.segments,
                         launch.segment_length,
                         launch.segments,
                         problem.reverse,
                         grid ? reinterpret_cast<float*>(words) : nullptr,
                         grid ? reinterpret_cast<float*>(words + launch.entering_offset) : nullptr,
                         skip};
    const bool compiled = scan::visit_scan_config<kNewtonReduceDomains>(
        launch.config, [&]<int E, int kThreads, ScanAccess A>() {
            if (grid) {
                scan::launch_pipe<scan::ReductionTotals<T, M, E, A>, E, kThreads, A>(
                    p, stream, "newton reduction totals");
                const scan::SegmentCarryParams carries{p.totals, p.entering, sequences, launch.segments,
                                                       problem.reverse};
                scan::launch_pipe<scan::SegmentCarries<M, kCarryElements>, kCarryElements, kCarryThreads,
                                  ScanAccess::direct>(carries, stream, "newton reduction segment carries");
            }
            scan::launch_pipe<scan::ReductionSolve<T, M, E, A, kAccumulate>, E, kThreads, A>(
                p, stream, "newton reduction solve");
        });
    if (!compiled)
        throw ShapeError("flashrnn::newton::reduce: configuration " + describe(launch.config) +
                         " is not compiled (see kNewtonReduceDomains in scan_launch.hpp)");
}

} // namespace

ReductionLaunch reduction_launch(const ReductionProblem& problem) {
    const ScanProblem scan{problem.shape.sequences, problem.shape.length, bytes_of(problem.dtype), false,
                           false};
    return choose_reduction_launch(limits_of_current_device(), kernel_of(problem.structure), scan);
}

void reduce_fp32(const ReductionProblem& problem, const ReductionLaunch& reduction, const float* jacobians,
                 const float* rhs, float* solution, bool accumulate, const int* skip, void* workspace,
                 Stream stream) {
    const bool block2x2 = problem.structure == JacobianStructure::block2x2;
    if (accumulate) {
        if (block2x2)
            run_pipes<float, Affine2x2, true>(problem, reduction, jacobians, rhs, solution, skip, workspace,
                                              stream);
        else
            run_pipes<float, ScalarAffine, true>(problem, reduction, jacobians, rhs, solution, skip,
                                                 workspace, stream);
    } else {
        if (block2x2)
            run_pipes<float, Affine2x2, false>(problem, reduction, jacobians, rhs, solution, nullptr,
                                               workspace, stream);
        else
            run_pipes<float, ScalarAffine, false>(problem, reduction, jacobians, rhs, solution, nullptr,
                                                  workspace, stream);
    }
}

} // namespace flashrnn::cuda::newton

namespace flashrnn::newton {

std::size_t reduce_workspace_bytes(const ReductionProblem& problem) {
    check_scan_shape("newton::reduce_workspace_bytes", problem.shape);
    return cuda::newton::reduction_launch(problem).workspace_bytes;
}

void reduce(const ReductionProblem& problem, const ReductionArgs& args, Stream stream) {
    check_reduction_args("newton::reduce", problem, args);
    const ReductionLaunch launch = cuda::newton::reduction_launch(problem);
    check_workspace("newton::reduce", args.workspace, launch.workspace_bytes);
    const auto run = [&]<class T, class M>() {
        cuda::newton::run_pipes<T, M, false>(
            problem, launch, static_cast<const T*>(args.jacobians.data), static_cast<const T*>(args.rhs.data),
            static_cast<T*>(args.solution.data), nullptr, args.workspace.data, stream);
    };
    const bool block2x2 = problem.structure == JacobianStructure::block2x2;
    if (problem.dtype == DType::bf16) {
        if (block2x2)
            run.template operator()<__nv_bfloat16, cuda::scan::Affine2x2>();
        else
            run.template operator()<__nv_bfloat16, cuda::scan::ScalarAffine>();
    } else {
        if (block2x2)
            run.template operator()<float, cuda::scan::Affine2x2>();
        else
            run.template operator()<float, cuda::scan::ScalarAffine>();
    }
}

} // namespace flashrnn::newton
