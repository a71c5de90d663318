// The 2x2 block recurrence's host entry (linrec2x2.hpp): argument checks and the launch of the pipe.
#include "cuda/scan/linrec2x2.hpp"

#include <cstdint>
#include <stdexcept>
#include <string>

#include "cuda/scan/linrec2x2_client.cuh"
#include "cuda/scan/scan_pipe.cuh"

namespace flashrnn::cuda::scan {

namespace {

constexpr int kElementsPerThread = 4;
constexpr int kThreads = 128;

// A tensor of `floats` floats per element: the generic row checks in floats, then the alignment of
// its vector loads.
void check_tensor(const char* tensor, const void* data, const ScanShape& shape, int floats) {
    const ScanShape in_floats{shape.sequences, shape.length * floats};
    check_rows("linrec2x2_forward", tensor, data, in_floats.length, in_floats, DType::fp32);
    if (reinterpret_cast<std::uintptr_t>(data) % (4u * static_cast<unsigned>(floats)) != 0)
        throw std::invalid_argument(std::string("flashrnn::linrec2x2_forward: ") + tensor +
                                    " is not aligned to " + std::to_string(4 * floats) + " bytes");
}

} // namespace

void linrec2x2_forward(const ScanShape& shape, const float* a, const float* b, float* h, Stream stream) {
    check_scan_shape("linrec2x2_forward", shape);
    check_tensor("a", a, shape, 4);
    check_tensor("b", b, shape, 2);
    check_tensor("h", h, shape, 2);
    const Linrec2x2Params params{{reinterpret_cast<const float4*>(a), shape.length},
                                 {reinterpret_cast<const float2*>(b), shape.length},
                                 {reinterpret_cast<float2*>(h), shape.length},
                                 shape.sequences,
                                 shape.length};
    launch_pipe<Linrec2x2Forward<kElementsPerThread>, kElementsPerThread, kThreads, ScanAccess::direct>(
        params, stream, "linrec2x2 forward pipe");
}

} // namespace flashrnn::cuda::scan
