// The 2x2 block recurrence's host entry (linrec2x2.hpp): argument checks and the launch of the pipe.
#include "cuda/scan/linrec2x2.hpp"

#include "cuda/scan/linrec2x2_client.cuh"
#include "cuda/scan/scan_pipe.cuh"
#include "flashrnn/core/tensor.hpp"

namespace flashrnn::cuda::scan {

namespace {

constexpr const char* kCall = "flashrnn::linrec2x2_forward";
constexpr int kElementsPerThread = 4;
constexpr int kThreads = 128;

// A tensor of `floats` floats per element, dense rows of fp32 [sequences, L * floats]: the scans' row
// check (the sizes, a null pointer, the 2^63-byte bound) and the alignment of its vector loads.
// `row_name`: the row's extent in the messages ("4L").
void check_floats(const char* tensor, const void* data, const ScanShape& shape, int floats,
                  const char* row_name) {
    const std::int64_t row = shape.length * floats;
    check_tensor(kCall, tensor, ConstTensorView{data, DType::fp32, {shape.sequences, row}},
                 {DType::fp32,
                  {{"sequences", shape.sequences}, {row_name, row}},
                  TensorRequirement::Strides::rows,
                  4 * floats});
}

} // namespace

void linrec2x2_forward(const ScanShape& shape, const float* a, const float* b, float* h, Stream stream) {
    check_scan_shape("linrec2x2_forward", shape);
    check_floats("a", a, shape, 4, "4L");
    check_floats("b", b, shape, 2, "2L");
    check_floats("h", h, shape, 2, "2L");
    const Linrec2x2Params params{{reinterpret_cast<const float4*>(a), shape.length},
                                 {reinterpret_cast<const float2*>(b), shape.length},
                                 {reinterpret_cast<float2*>(h), shape.length},
                                 shape.sequences,
                                 shape.length};
    launch_pipe<Linrec2x2Forward<kElementsPerThread>, kElementsPerThread, kThreads, ScanAccess::direct>(
        params, stream, "linrec2x2 forward pipe");
}

} // namespace flashrnn::cuda::scan
