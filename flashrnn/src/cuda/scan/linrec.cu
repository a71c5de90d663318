// linrec's host API: argument checks, the choice of kernel and configuration, the launch.
#include "flashrnn/linrec.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "cuda/common/cuda_check.hpp"
#include "cuda/common/device.hpp"
#include "cuda/scan/config_dispatch.cuh"
#include "cuda/scan/linrec_clients.cuh"
#include "cuda/scan/linrec_ref_kernels.cuh"
#include "cuda/scan/scan_pipe.cuh"

namespace flashrnn {

namespace {

using cuda::scan::LinrecBackward;
using cuda::scan::LinrecForward;
using cuda::scan::RowPointer;

constexpr int kRefThreads = 128;

template <class T> RowPointer<const T> rows_of(ConstRows rows) {
    return {static_cast<const T*>(rows.data), rows.row_stride};
}
template <class T> RowPointer<T> rows_of(Rows rows) { return {static_cast<T*>(rows.data), rows.row_stride}; }

bool all_aligned(std::initializer_list<ConstRows> tensors, DType dtype, int bytes) {
    return std::all_of(tensors.begin(), tensors.end(),
                       [&](ConstRows t) { return rows_aligned(t.data, t.row_stride, dtype, bytes); });
}

ConstRows as_const(Rows rows) { return {rows.data, rows.row_stride}; }

// The configuration of a tile or pipe launch: the forced one (checked) or the model's.
ScanConfig pick_config(const char* call, ScanKernel kernel, DType dtype, const ScanShape& shape,
                       std::initializer_list<ConstRows> tensors, const LinrecOptions& options) {
    const bool tile = options.variant == LinrecVariant::tile;
    ScanConfig config;
    if (options.config) {
        config = *options.config;
        if (!is_compiled(kernel, config))
            throw std::invalid_argument(std::string("flashrnn::") + call + ": configuration " + describe(config) +
                                        " is not compiled (see kLinrecDomains in scan_launch.hpp)");
        if (tile && static_cast<std::int64_t>(config.elements_per_thread) * config.threads_per_block < shape.length)
            throw std::invalid_argument(std::string("flashrnn::") + call + ": the tile variant needs a tile of at least " +
                                        std::to_string(shape.length) + " elements, configuration " + describe(config) +
                                        " has " + std::to_string(config.elements_per_thread * config.threads_per_block));
    } else {
        ScanProblem problem{shape.sequences, shape.length, bytes_of(dtype), all_aligned(tensors, dtype, 16), tile};
        config = choose_scan_config(cuda::limits_of_current_device(), kernel, problem);
    }
    // Vector access needs every row aligned to its packet; otherwise the coalesced shared scheme.
    const int packet_bytes = std::min(16, config.elements_per_thread * bytes_of(dtype));
    if (config.access == ScanAccess::vector && !all_aligned(tensors, dtype, packet_bytes))
        config.access = ScanAccess::shared;
    return config;
}

unsigned ref_blocks(std::int64_t sequences) {
    return static_cast<unsigned>(std::min<std::int64_t>((sequences + kRefThreads - 1) / kRefThreads, 2147483647));
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
        const typename LinrecForward<T, 1, ScanAccess::direct>::Params p{
            rows_of<T>(x), rows_of<T>(c), rows_of<T>(y), shape.sequences, shape.length, reverse};
        if (options.variant == LinrecVariant::ref) {
            cuda::scan::linrec_ref_forward_kernel<T><<<ref_blocks(shape.sequences), kRefThreads, 0, stream>>>(p);
            cuda::check_launch("linrec_ref_forward_kernel");
            return;
        }
        const ScanConfig config = pick_config(call, ScanKernel::linrec_forward, dtype, shape, {x, c, as_const(y)}, options);
        cuda::scan::visit_scan_config<kLinrecDomains>(config, [&]<int E, int kThreads, ScanAccess A>() {
            using Client = LinrecForward<T, E, A>;
            const typename Client::Params params{p.x, p.c, p.y, p.sequences, p.length, p.reverse};
            cuda::scan::launch_pipe<Client, E, kThreads, A>(params, stream, "linrec forward pipe");
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
        const typename LinrecBackward<T, 1, ScanAccess::direct>::Params p{
            rows_of<T>(dy), rows_of<T>(c), rows_of<T>(y), rows_of<T>(dx), rows_of<T>(dc),
            shape.sequences, shape.length, reverse};
        if (options.variant == LinrecVariant::ref) {
            cuda::scan::linrec_ref_backward_kernel<T><<<ref_blocks(shape.sequences), kRefThreads, 0, stream>>>(p);
            cuda::check_launch("linrec_ref_backward_kernel");
            return;
        }
        const ScanConfig config = pick_config(call, ScanKernel::linrec_backward, dtype, shape,
                                              {dy, c, y, as_const(dx), as_const(dc)}, options);
        cuda::scan::visit_scan_config<kLinrecDomains>(config, [&]<int E, int kThreads, ScanAccess A>() {
            using Client = LinrecBackward<T, E, A>;
            const typename Client::Params params{p.dy, p.c, p.y, p.dx, p.dc, p.sequences, p.length, p.reverse};
            cuda::scan::launch_pipe<Client, E, kThreads, A>(params, stream, "linrec backward pipe");
        });
    });
}

} // namespace flashrnn
