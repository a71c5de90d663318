// The fused Newton backward's launch: the scan launch model's fused_backward_config for the cell (or
// options.fused_config), one block per sequence (the grid's blocks take the sequences
// beyond 2^31 - 1 in turn).

#include <algorithm>
#include <cstdint>

#include "cuda/common/cuda_check.hpp"
#include "cuda/common/device.hpp"
#include "cuda/newton/fused_backward.cuh"
#include "cuda/newton/fused_backward_launch.hpp"
#include "cuda/newton/problem_dispatch.cuh"
#include "cuda/scan/config_dispatch.cuh"
#include "flashrnn/core/error.hpp"
#include "flashrnn/newton/passes.hpp"

namespace flashrnn::cuda::newton {

void fused_backward(const flashrnn::newton::Problem& problem, const flashrnn::newton::BackwardArgs& args,
                    const flashrnn::newton::Options& options, Stream stream) {
    const ScanConfig config =
        options.fused_config ? *options.fused_config
                             : flashrnn::newton::fused_backward_config(limits_of_current_device(), problem);
    const Rows rows = rows_of(problem);
    const auto blocks = static_cast<unsigned>(std::min<std::int64_t>(rows.sequences, 2147483647));
    const auto launch = [&]<class C, class T>() {
        const FusedBackwardParams<T> p{static_cast<const T*>(args.inputs.data),
                                       static_cast<const float*>(args.parameters.data),
                                       static_cast<const float*>(args.initial_state.data),
                                       static_cast<const T*>(args.states.data),
                                       static_cast<const T*>(args.d_states.data),
                                       static_cast<const float*>(args.d_last_state.data),
                                       static_cast<T*>(args.d_inputs.data),
                                       static_cast<float*>(args.d_parameters.data),
                                       static_cast<float*>(args.d_initial_state.data),
                                       rows};
        const bool compiled =
            scan::visit_scan_config<kNewtonFusedDomains>(config, [&]<int E, int kThreads, ScanAccess A>() {
                fused_backward_kernel<C, T, E, kThreads, A><<<blocks, kThreads, 0, stream>>>(p);
                check_launch("newton fused_backward_kernel");
            });
        if (!compiled)
            throw ShapeError("flashrnn::newton::backward: configuration " + describe(config) +
                             " is not compiled (see kNewtonFusedDomains in scan_launch.hpp)");
    };
    visit_problem(problem, launch);
}

} // namespace flashrnn::cuda::newton
