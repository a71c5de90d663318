// linrec's host API: argument checks, the choice of kernel and configuration, the launch.
#include "flashrnn/scan/linrec.hpp"

#include <algorithm>

#include "cuda/common/cuda_check.hpp"
#include "cuda/common/device.hpp"
#include "cuda/scan/config_dispatch.cuh"
#include "cuda/scan/launch_config.hpp"
#include "cuda/scan/linrec_clients.cuh"
#include "cuda/scan/linrec_ref_kernels.cuh"
#include "cuda/scan/scan_pipe.cuh"
#include "flashrnn/scan/rows.hpp"

namespace flashrnn::linrec {

namespace {

using cuda::scan::LinrecBackward;
using cuda::scan::LinrecBackwardParams;
using cuda::scan::LinrecForward;
using cuda::scan::LinrecForwardParams;
using cuda::scan::resolve_scan_config;
using cuda::scan::rows_of;

// The calls as messages name them; check_scan_shape adds the "flashrnn::".
constexpr const char* kForward = "flashrnn::linrec::forward";
constexpr const char* kBackward = "flashrnn::linrec::backward";

constexpr int kRefThreads = 128;

unsigned ref_blocks(std::int64_t sequences) {
    return static_cast<unsigned>(
        std::min<std::int64_t>((sequences + kRefThreads - 1) / kRefThreads, 2147483647));
}

} // namespace

ScanConfig config(const Problem& problem, bool backward, bool aligned) {
    check_scan_shape("linrec::config", problem.shape);
    return choose_scan_config(
        cuda::limits_of_current_device(), backward ? ScanKernel::linrec_backward : ScanKernel::linrec_forward,
        {problem.shape.sequences, problem.shape.length, bytes_of(problem.dtype), aligned, false});
}

void forward(const Problem& problem, const ForwardArgs& args, const Options& options, Stream stream) {
    const DType dtype = problem.dtype;
    const ScanShape& shape = problem.shape;
    check_scan_shape("linrec::forward", shape);
    check_rows(kForward, "x", args.x, dtype, shape);
    check_rows(kForward, "c", args.c, dtype, shape);
    check_rows(kForward, "y", args.y, dtype, shape);
    cuda::visit_dtype(dtype, [&]<class T>(T) {
        const LinrecForwardParams<T> p{rows_of<T>(args.x), rows_of<T>(args.c), rows_of<T>(args.y),
                                       shape.sequences,    shape.length,       problem.reverse};
        if (options.variant == Variant::ref) {
            cuda::scan::linrec_ref_forward_kernel<T>
                <<<ref_blocks(shape.sequences), kRefThreads, 0, stream>>>(p);
            cuda::check_launch("linrec_ref_forward_kernel");
            return;
        }
        const ScanConfig launch =
            resolve_scan_config(kForward, ScanKernel::linrec_forward, dtype, shape, {args.x, args.c, args.y},
                                options.config, options.variant == Variant::tile);
        cuda::scan::visit_scan_config<kLinrecDomains>(launch, [&]<int E, int kThreads, ScanAccess A>() {
            cuda::scan::launch_pipe<LinrecForward<T, E, A>, E, kThreads, A>(p, stream, "linrec forward pipe");
        });
    });
}

void backward(const Problem& problem, const BackwardArgs& args, const Options& options, Stream stream) {
    const DType dtype = problem.dtype;
    const ScanShape& shape = problem.shape;
    check_scan_shape("linrec::backward", shape);
    check_rows(kBackward, "dy", args.dy, dtype, shape);
    check_rows(kBackward, "c", args.c, dtype, shape);
    check_rows(kBackward, "y", args.y, dtype, shape);
    check_rows(kBackward, "dx", args.dx, dtype, shape);
    check_rows(kBackward, "dc", args.dc, dtype, shape);
    cuda::visit_dtype(dtype, [&]<class T>(T) {
        const LinrecBackwardParams<T> p{rows_of<T>(args.dy), rows_of<T>(args.c),  rows_of<T>(args.y),
                                        rows_of<T>(args.dx), rows_of<T>(args.dc), shape.sequences,
                                        shape.length,        problem.reverse};
        if (options.variant == Variant::ref) {
            cuda::scan::linrec_ref_backward_kernel<T>
                <<<ref_blocks(shape.sequences), kRefThreads, 0, stream>>>(p);
            cuda::check_launch("linrec_ref_backward_kernel");
            return;
        }
        const ScanConfig launch = resolve_scan_config(kBackward, ScanKernel::linrec_backward, dtype, shape,
                                                      {args.dy, args.c, args.y, args.dx, args.dc},
                                                      options.config, options.variant == Variant::tile);
        cuda::scan::visit_scan_config<kLinrecDomains>(launch, [&]<int E, int kThreads, ScanAccess A>() {
            cuda::scan::launch_pipe<LinrecBackward<T, E, A>, E, kThreads, A>(p, stream,
                                                                             "linrec backward pipe");
        });
    });
}

} // namespace flashrnn::linrec
