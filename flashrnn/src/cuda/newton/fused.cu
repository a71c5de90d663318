// The fused Newton forward's launch: the configuration from the scan launch model (fused_config, one of
// kNewtonFusedDomains), one block per sequence (the grid's blocks take the sequences beyond 2^31 - 1 in
// turn).

#include <algorithm>
#include <cstdint>

#include "cuda/common/cuda_check.hpp"
#include "cuda/common/device.hpp"
#include "cuda/newton/fused.cuh"
#include "cuda/newton/fused_launch.hpp"
#include "cuda/newton/problem_dispatch.cuh"
#include "cuda/scan/config_dispatch.cuh"
#include "flashrnn/core/error.hpp"
#include "flashrnn/newton/passes.hpp"

namespace flashrnn::cuda::newton {

void fused_forward(const flashrnn::newton::Problem& problem, const flashrnn::newton::ForwardArgs& args,
                   const flashrnn::newton::Options& options, Counters* counters, Stream stream) {
    const ScanConfig config = options.fused_config
                                  ? *options.fused_config
                                  : flashrnn::newton::fused_config(limits_of_current_device(), problem);
    const Rows rows = rows_of(problem);
    const auto blocks = static_cast<unsigned>(std::min<std::int64_t>(rows.sequences, 2147483647));
    const auto launch = [&]<class C, class T>() {
        const FusedParams<T> p{static_cast<const T*>(args.inputs.data),
                               static_cast<const float*>(args.parameters.data),
                               static_cast<const float*>(args.initial_state.data),
                               static_cast<T*>(args.states.data),
                               static_cast<float*>(args.last_state.data),
                               counters,
                               rows,
                               options.max_iterations,
                               options.tolerance ? static_cast<float>(options.tolerance->absolute) : 0.0f,
                               options.tolerance ? static_cast<float>(options.tolerance->relative) : 0.0f};
        const bool compiled =
            scan::visit_scan_config<kNewtonFusedDomains>(config, [&]<int E, int kThreads, ScanAccess A>() {
                constexpr int shared_bytes = kFusedInputBytes<C, T, E, kThreads>;
                const auto run = [&](auto kernel) {
                    // Blocks of many warps stage more than the 48 KiB a kernel gets without asking.
                    if constexpr (shared_bytes > 48 * 1024)
                        check(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                   shared_bytes),
                              "newton fused_forward_kernel: shared memory");
                    kernel<<<blocks, kThreads, shared_bytes, stream>>>(p);
                    check_launch("newton fused_forward_kernel");
                };
                if (options.tolerance)
                    run(fused_forward_kernel<C, T, E, kThreads, A, true>);
                else
                    run(fused_forward_kernel<C, T, E, kThreads, A, false>);
            });
        if (!compiled)
            throw ShapeError("flashrnn::newton::forward: configuration " + describe(config) +
                             " is not compiled (see kNewtonFusedDomains in scan_launch.hpp)");
    };
    visit_problem(problem, launch);
}

} // namespace flashrnn::cuda::newton
