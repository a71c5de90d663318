#include "cuda/scan/launch_config.hpp"

#include <algorithm>
#include <cstdint>
#include <string>

#include "cuda/common/device.hpp"
#include "flashrnn/core/error.hpp"
#include "flashrnn/scan/rows.hpp"

namespace flashrnn::cuda::scan {

namespace {

bool all_aligned(std::initializer_list<ConstTensorView> tensors, int bytes) {
    return std::all_of(tensors.begin(), tensors.end(),
                       [&](const ConstTensorView& t) { return rows_aligned(t, bytes); });
}

const char* domains_name(ScanKernel kernel) {
    if (kernel == ScanKernel::newton_reduce_diagonal || kernel == ScanKernel::newton_reduce_2x2)
        return "kNewtonReduceDomains";
    return kernel == ScanKernel::rglru_forward || kernel == ScanKernel::rglru_backward ? "kRglruDomains"
                                                                                       : "kLinrecDomains";
}

} // namespace

ScanConfig resolve_scan_config(std::string_view call, ScanKernel kernel, DType dtype, const ScanShape& shape,
                               std::initializer_list<ConstTensorView> tensors,
                               const std::optional<ScanConfig>& forced, bool single_tile) {
    const std::string prefix = std::string(call) + ": ";
    ScanConfig config;
    if (forced) {
        config = *forced;
        if (!is_compiled(kernel, config))
            throw ShapeError(prefix + "configuration " + describe(config) + " is not compiled (see " +
                             domains_name(kernel) + " in scan_launch.hpp)");
        if (single_tile &&
            static_cast<std::int64_t>(config.elements_per_thread) * config.threads_per_block < shape.length)
            throw ShapeError(prefix + "the tile variant needs a tile of at least " +
                             std::to_string(shape.length) + " elements, configuration " + describe(config) +
                             " has " + std::to_string(config.elements_per_thread * config.threads_per_block));
    } else {
        const ScanProblem problem{shape.sequences, shape.length, bytes_of(dtype), all_aligned(tensors, 16),
                                  single_tile};
        config = choose_scan_config(limits_of_current_device(), kernel, problem);
    }
    // Vector access needs every row aligned to its packet; otherwise the coalesced shared scheme.
    const int packet_bytes = std::min(16, config.elements_per_thread * bytes_of(dtype));
    if (config.access == ScanAccess::vector && !all_aligned(tensors, packet_bytes))
        config.access = ScanAccess::shared;
    return config;
}

} // namespace flashrnn::cuda::scan
