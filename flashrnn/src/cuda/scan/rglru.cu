// The fused RG-LRU's host API: argument checks, the configuration from the scan model, the launch.
#include "flashrnn/scan/rglru.hpp"

#include <string>

#include "cuda/common/cuda_check.hpp"
#include "cuda/scan/config_dispatch.cuh"
#include "cuda/scan/launch_config.hpp"
#include "cuda/scan/rglru_clients.cuh"
#include "cuda/scan/scan_pipe.cuh"
#include "flashrnn/core/error.hpp"
#include "flashrnn/scan/rows.hpp"
#include "flashrnn/tiling/scan_launch.hpp"

namespace flashrnn::rglru {

namespace {

using cuda::scan::resolve_scan_config;
using cuda::scan::RglruBackward;
using cuda::scan::RglruForward;
using cuda::scan::RglruRowParams;
using cuda::scan::rows_of;

// The calls as messages name them; check_rglru_shape adds the "flashrnn::".
constexpr const char* kForward = "flashrnn::rglru::forward";
constexpr const char* kBackward = "flashrnn::rglru::backward";

// The dtype, then the sizes; the tensors are checked by the callers.
void check_problem(const char* call, const char* short_call, const Problem& problem) {
    if (problem.dtype == DType::fp16)
        throw UnsupportedError(std::string(call) + ": dtype fp16 is not supported (fp32 or bf16)");
    check_rglru_shape(short_call, problem.shape);
}

// [B*R, L] rows of the problem's dtype.
void check_sequence(const char* call, const char* tensor, const ConstTensorView& view,
                    const Problem& problem) {
    check_rows(call, tensor, view, problem.dtype, problem.shape.scan(), "B*R");
}

// fp32 [B*R]: a state per row.
TensorRequirement states_requirement(const Problem& problem) {
    return {DType::fp32, {{"B*R", problem.shape.batch * problem.shape.channels}}};
}

// fp32 [R]: Lambda and its gradient.
TensorRequirement lambda_requirement(const Problem& problem) {
    return {DType::fp32, {{"R", problem.shape.channels}}};
}

// Only the dtypes RG-LRU supports: no fp16 kernels are compiled.
template <class F> void visit_rglru_dtype(DType dtype, F&& f) {
    if (dtype == DType::bf16)
        f(__nv_bfloat16{});
    else
        f(float{});
}

} // namespace

void forward(const Problem& problem, const ForwardArgs& args, const Options& options, Stream stream) {
    check_problem(kForward, "rglru::forward", problem);
    check_sequence(kForward, "x", args.x, problem);
    check_sequence(kForward, "gate_a", args.gate_a, problem);
    check_sequence(kForward, "gate_x", args.gate_x, problem);
    check_tensor(kForward, "lambda", args.lambda, lambda_requirement(problem));
    check_optional_tensor(kForward, "h0", args.h0, states_requirement(problem));
    check_sequence(kForward, "h", args.h, problem);
    check_optional_tensor(kForward, "h_last", args.h_last, states_requirement(problem));
    const DType dtype = problem.dtype;
    const ScanShape scan = problem.shape.scan();
    const ScanConfig config =
        resolve_scan_config(kForward, ScanKernel::rglru_forward, dtype, scan,
                            {args.x, args.gate_a, args.gate_x, args.h}, options.config, false);
    const RglruRowParams rows{static_cast<const float*>(args.lambda.data),
                              static_cast<const float*>(args.h0.data), problem.shape.channels};
    visit_rglru_dtype(dtype, [&]<class T>(T) {
        cuda::scan::visit_scan_config<kRglruDomains>(config, [&]<int E, int kThreads, ScanAccess A>() {
            using Client = RglruForward<T, E, A>;
            const typename Client::Params params{rows_of<T>(args.x),
                                                 rows_of<T>(args.gate_a),
                                                 rows_of<T>(args.gate_x),
                                                 rows_of<T>(args.h),
                                                 rows,
                                                 static_cast<float*>(args.h_last.data),
                                                 scan.sequences,
                                                 scan.length};
            cuda::scan::launch_pipe<Client, E, kThreads, A>(params, stream, "rglru forward");
        });
    });
}

void backward(const Problem& problem, const BackwardArgs& args, const Options& options, Stream stream) {
    check_problem(kBackward, "rglru::backward", problem);
    check_sequence(kBackward, "x", args.x, problem);
    check_sequence(kBackward, "gate_a", args.gate_a, problem);
    check_sequence(kBackward, "gate_x", args.gate_x, problem);
    check_tensor(kBackward, "lambda", args.lambda, lambda_requirement(problem));
    check_optional_tensor(kBackward, "h0", args.h0, states_requirement(problem));
    check_sequence(kBackward, "h", args.h, problem);
    check_sequence(kBackward, "dh", args.dh, problem);
    check_optional_tensor(kBackward, "dh_last", args.dh_last, states_requirement(problem));
    check_sequence(kBackward, "dx", args.dx, problem);
    check_sequence(kBackward, "d_gate_a", args.d_gate_a, problem);
    check_sequence(kBackward, "d_gate_x", args.d_gate_x, problem);
    check_tensor(kBackward, "d_lambda", args.d_lambda, lambda_requirement(problem));
    check_optional_tensor(kBackward, "dh0", args.dh0, states_requirement(problem));
    const DType dtype = problem.dtype;
    const ScanShape scan = problem.shape.scan();
    const ScanConfig config = resolve_scan_config(
        kBackward, ScanKernel::rglru_backward, dtype, scan,
        {args.x, args.gate_a, args.gate_x, args.h, args.dh, args.dx, args.d_gate_a, args.d_gate_x},
        options.config, false);
    const RglruRowParams rows{static_cast<const float*>(args.lambda.data),
                              static_cast<const float*>(args.h0.data), problem.shape.channels};
    cuda::check(cudaMemsetAsync(args.d_lambda.data, 0,
                                static_cast<std::size_t>(problem.shape.channels) * sizeof(float), stream),
                "cudaMemsetAsync(d_lambda)");
    visit_rglru_dtype(dtype, [&]<class T>(T) {
        cuda::scan::visit_scan_config<kRglruDomains>(config, [&]<int E, int kThreads, ScanAccess A>() {
            using Client = RglruBackward<T, E, A>;
            const typename Client::Params params{rows_of<T>(args.x),
                                                 rows_of<T>(args.gate_a),
                                                 rows_of<T>(args.gate_x),
                                                 rows_of<T>(args.h),
                                                 rows_of<T>(args.dh),
                                                 rows_of<T>(args.dx),
                                                 rows_of<T>(args.d_gate_a),
                                                 rows_of<T>(args.d_gate_x),
                                                 rows,
                                                 static_cast<const float*>(args.dh_last.data),
                                                 static_cast<float*>(args.d_lambda.data),
                                                 static_cast<float*>(args.dh0.data),
                                                 scan.sequences,
                                                 scan.length};
            cuda::scan::launch_pipe<Client, E, kThreads, A>(params, stream, "rglru backward");
        });
    });
}

} // namespace flashrnn::rglru
