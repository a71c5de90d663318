// linrec's host API: argument checks, the choice of kernel and configuration, the launch.
#include "flashrnn/linrec.hpp"

#include <algorithm>

#include "cuda/common/cuda_check.hpp"
#include "cuda/common/device.hpp"
#include "cuda/scan/config_dispatch.cuh"
#include "cuda/scan/launch_config.hpp"
#include "cuda/scan/linrec_clients.cuh"
#include "cuda/scan/linrec_ref_kernels.cuh"
#include "cuda/scan/scan_pipe.cuh"

namespace flashrnn {

namespace {

using cuda::scan::LinrecBackward;
using cuda::scan::LinrecBackwardParams;
using cuda::scan::LinrecForward;
using cuda::scan::LinrecForwardParams;
using cuda::scan::resolve_scan_config;
using cuda::scan::rows_of;

constexpr int kRefThreads = 128;

unsigned ref_blocks(std::int64_t sequences) {
    return static_cast<unsigned>(
        std::min<std::int64_t>((sequences + kRefThreads - 1) / kRefThreads, 2147483647));
}

} // namespace

ScanConfig linrec_config(DType dtype, const ScanShape& shape, bool backward, bool aligned) {
    check_scan_shape("linrec_config", shape);
    return choose_scan_config(cuda::limits_of_current_device(),
                              backward ? ScanKernel::linrec_backward : ScanKernel::linrec_forward,
                              {shape.sequences, shape.length, bytes_of(dtype), aligned, false});
}

void linrec_forward(DType dtype, const ScanShape& shape, ConstRows x, ConstRows c, Rows y, bool reverse,
                    Stream stream, const LinrecOptions& options) {
    const char* call = "linrec_forward";
    check_scan_shape(call, shape);
    check_rows(call, "x", x, shape, dtype);
    check_rows(call, "c", c, shape, dtype);
    check_rows(call, "y", as_const(y), shape, dtype);
    cuda::visit_dtype(dtype, [&]<class T>(T) {
        const LinrecForwardParams<T> p{rows_of<T>(x),   rows_of<T>(c), rows_of<T>(y),
                                       shape.sequences, shape.length,  reverse};
        if (options.variant == LinrecVariant::ref) {
            cuda::scan::linrec_ref_forward_kernel<T>
                <<<ref_blocks(shape.sequences), kRefThreads, 0, stream>>>(p);
            cuda::check_launch("linrec_ref_forward_kernel");
            return;
        }
        const ScanConfig config =
            resolve_scan_config(call, ScanKernel::linrec_forward, dtype, shape, {x, c, as_const(y)},
                                options.config, options.variant == LinrecVariant::tile);
        cuda::scan::visit_scan_config<kLinrecDomains>(config, [&]<int E, int kThreads, ScanAccess A>() {
            cuda::scan::launch_pipe<LinrecForward<T, E, A>, E, kThreads, A>(p, stream, "linrec forward pipe");
        });
    });
}

void linrec_backward(DType dtype, const ScanShape& shape, ConstRows dy, ConstRows c, ConstRows y, Rows dx,
                     Rows dc, bool reverse, Stream stream, const LinrecOptions& options) {
    const char* call = "linrec_backward";
    check_scan_shape(call, shape);
    check_rows(call, "dy", dy, shape, dtype);
    check_rows(call, "c", c, shape, dtype);
    check_rows(call, "y", y, shape, dtype);
    check_rows(call, "dx", as_const(dx), shape, dtype);
    check_rows(call, "dc", as_const(dc), shape, dtype);
    cuda::visit_dtype(dtype, [&]<class T>(T) {
        const LinrecBackwardParams<T> p{rows_of<T>(dy), rows_of<T>(c),   rows_of<T>(y), rows_of<T>(dx),
                                        rows_of<T>(dc), shape.sequences, shape.length,  reverse};
        if (options.variant == LinrecVariant::ref) {
            cuda::scan::linrec_ref_backward_kernel<T>
                <<<ref_blocks(shape.sequences), kRefThreads, 0, stream>>>(p);
            cuda::check_launch("linrec_ref_backward_kernel");
            return;
        }
        const ScanConfig config = resolve_scan_config(call, ScanKernel::linrec_backward, dtype, shape,
                                                      {dy, c, y, as_const(dx), as_const(dc)}, options.config,
                                                      options.variant == LinrecVariant::tile);
        cuda::scan::visit_scan_config<kLinrecDomains>(config, [&]<int E, int kThreads, ScanAccess A>() {
            cuda::scan::launch_pipe<LinrecBackward<T, E, A>, E, kThreads, A>(p, stream,
                                                                             "linrec backward pipe");
        });
    });
}

} // namespace flashrnn
