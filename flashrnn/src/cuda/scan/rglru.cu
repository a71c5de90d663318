// The fused RG-LRU's host API: argument checks, the configuration from the scan model, the launch.
#include "flashrnn/rglru.hpp"

#include <stdexcept>
#include <string>

#include "cuda/common/cuda_check.hpp"
#include "cuda/scan/config_dispatch.cuh"
#include "cuda/scan/launch_config.hpp"
#include "cuda/scan/rglru_clients.cuh"
#include "cuda/scan/scan_pipe.cuh"
#include "flashrnn/scan_launch.hpp"

namespace flashrnn {

namespace {

using cuda::scan::resolve_scan_config;
using cuda::scan::RglruBackward;
using cuda::scan::RglruForward;
using cuda::scan::RglruRowParams;
using cuda::scan::rows_of;

void check_arguments(const char* call, DType dtype, const RglruShape& shape, const float* lambda) {
    if (dtype == DType::fp16)
        throw std::invalid_argument(std::string("flashrnn::") + call +
                                    ": dtype fp16 is not supported (fp32 or bf16)");
    check_rglru_shape(call, shape);
    if (lambda == nullptr)
        throw std::invalid_argument(std::string("flashrnn::") + call + ": lambda is a null pointer");
}

// Only the dtypes RG-LRU supports: no fp16 kernels are compiled.
template <class F> void visit_rglru_dtype(DType dtype, F&& f) {
    if (dtype == DType::bf16)
        f(__nv_bfloat16{});
    else
        f(float{});
}

} // namespace

void rglru_forward(DType dtype, const RglruShape& shape, const RglruForwardArgs& args, Stream stream) {
    const char* call = "rglru_forward";
    check_arguments(call, dtype, shape, args.lambda);
    const ScanShape scan = shape.scan();
    check_rows(call, "x", args.x, scan, dtype);
    check_rows(call, "gate_a", args.gate_a, scan, dtype);
    check_rows(call, "gate_x", args.gate_x, scan, dtype);
    check_rows(call, "h", as_const(args.h), scan, dtype);
    const ScanConfig config =
        resolve_scan_config(call, ScanKernel::rglru_forward, dtype, scan,
                            {args.x, args.gate_a, args.gate_x, as_const(args.h)}, args.config, false);
    visit_rglru_dtype(dtype, [&]<class T>(T) {
        cuda::scan::visit_scan_config<kRglruDomains>(config, [&]<int E, int kThreads, ScanAccess A>() {
            using Client = RglruForward<T, E, A>;
            const typename Client::Params params{rows_of<T>(args.x),
                                                 rows_of<T>(args.gate_a),
                                                 rows_of<T>(args.gate_x),
                                                 rows_of<T>(args.h),
                                                 RglruRowParams{args.lambda, args.h0, shape.channels},
                                                 args.h_last,
                                                 scan.sequences,
                                                 scan.length};
            cuda::scan::launch_pipe<Client, E, kThreads, A>(params, stream, "rglru forward");
        });
    });
}

void rglru_backward(DType dtype, const RglruShape& shape, const RglruBackwardArgs& args, Stream stream) {
    const char* call = "rglru_backward";
    check_arguments(call, dtype, shape, args.lambda);
    const ScanShape scan = shape.scan();
    check_rows(call, "x", args.x, scan, dtype);
    check_rows(call, "gate_a", args.gate_a, scan, dtype);
    check_rows(call, "gate_x", args.gate_x, scan, dtype);
    check_rows(call, "h", args.h, scan, dtype);
    check_rows(call, "dh", args.dh, scan, dtype);
    check_rows(call, "dx", as_const(args.dx), scan, dtype);
    check_rows(call, "d_gate_a", as_const(args.d_gate_a), scan, dtype);
    check_rows(call, "d_gate_x", as_const(args.d_gate_x), scan, dtype);
    if (args.d_lambda == nullptr)
        throw std::invalid_argument("flashrnn::rglru_backward: d_lambda is a null pointer");
    const ScanConfig config =
        resolve_scan_config(call, ScanKernel::rglru_backward, dtype, scan,
                            {args.x, args.gate_a, args.gate_x, args.h, args.dh, as_const(args.dx),
                             as_const(args.d_gate_a), as_const(args.d_gate_x)},
                            args.config, false);
    cuda::check(
        cudaMemsetAsync(args.d_lambda, 0, static_cast<std::size_t>(shape.channels) * sizeof(float), stream),
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
                                                 RglruRowParams{args.lambda, args.h0, shape.channels},
                                                 args.dh_last,
                                                 args.d_lambda,
                                                 args.dh0,
                                                 scan.sequences,
                                                 scan.length};
            cuda::scan::launch_pipe<Client, E, kThreads, A>(params, stream, "rglru backward");
        });
    });
}

} // namespace flashrnn
