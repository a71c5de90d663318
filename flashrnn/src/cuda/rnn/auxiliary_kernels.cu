#include "cuda/rnn/auxiliary_kernels.hpp"

#include <algorithm>

#include "cuda/common/cuda_check.hpp"
#include "cuda/common/elements.cuh"

namespace flashrnn::alternating {
namespace {

constexpr int kThreads = 256;
constexpr std::int64_t kMaxRowSplits = 256;

unsigned blocks_for(std::int64_t count) {
    return static_cast<unsigned>((count + kThreads - 1) / kThreads);
}

// out[b, a, i] = in[a, b, i] for in [outer, inner, block] (converting the element type): R to
// head-major order and dR back to the API's gate-major order are this one permutation.
template <class In, class Out>
__global__ void swap_outer_dimensions_kernel(std::int64_t outer, std::int64_t inner, std::int64_t block,
                                             const In* in, Out* out) {
    const std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i >= outer * inner * block) return;
    const std::int64_t out_row = i / block; // b * outer + a
    const std::int64_t b = out_row / outer, a = out_row % outer;
    out[i] = cuda::from_float<Out>(cuda::to_float(in[(a * inner + b) * block + i % block]));
}

template <class In, class Out>
void swap_outer_dimensions(std::int64_t outer, std::int64_t inner, std::int64_t block, const In* in, Out* out,
                           Stream stream) {
    swap_outer_dimensions_kernel<In, Out>
        <<<blocks_for(outer * inner * block), kThreads, 0, stream>>>(outer, inner, block, in, out);
    cuda::check_launch("swap_outer_dimensions_kernel");
}

std::int64_t row_splits(const BiasGradientShape& shape) {
    return std::min(shape.rows, kMaxRowSplits);
}

// Pass 1: split `s` of the rows sums rows s, s + splits, ... of every column; a warp reads
// consecutive columns of one row (coalesced).
template <class T>
__global__ void bias_partial_kernel(std::int64_t rows, std::int64_t columns, std::int64_t splits,
                                    const T* d_gates, float* partial_sums) {
    const std::int64_t column = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    const std::int64_t split = blockIdx.y;
    if (column >= columns) return;
    float sum = 0.0f;
    for (std::int64_t row = split; row < rows; row += splits)
        sum += cuda::to_float(d_gates[row * columns + column]);
    partial_sums[split * columns + column] = sum;
}

// Pass 2: sums the splits of each column and writes it to its bias row.
template <class T>
__global__ void bias_final_kernel(BiasGradientShape shape, std::int64_t splits, const float* partial_sums,
                                  T* d_bias) {
    const std::int64_t columns = shape.heads * shape.slots * shape.head_dim;
    const std::int64_t column = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (column >= columns) return;
    float sum = 0.0f;
    for (std::int64_t split = 0; split < splits; ++split)
        sum += partial_sums[split * columns + column];
    const std::int64_t d = column % shape.head_dim;
    const std::int64_t slot = (column / shape.head_dim) % shape.slots;
    const std::int64_t h = column / (shape.head_dim * shape.slots);
    const std::int64_t gate = shape.gate_of_slot[slot];
    d_bias[(gate * shape.heads + h) * shape.head_dim + d] = cuda::from_float<T>(sum);
}

} // namespace

void reorder_weights_head_major(DType dtype, WeightShape shape, const void* weights, void* head_major,
                                Stream stream) {
    cuda::visit_dtype(dtype, [&]<class T>(T) {
        swap_outer_dimensions(shape.recurrent_gates, shape.heads, shape.head_dim * shape.head_dim,
                              static_cast<const T*>(weights), static_cast<T*>(head_major), stream);
    });
}

void weights_gradient_to_api_layout(DType dtype, WeightShape shape, const float* head_major, void* d_weights,
                                    Stream stream) {
    cuda::visit_dtype(dtype, [&]<class T>(T) {
        swap_outer_dimensions(shape.heads, shape.recurrent_gates, shape.head_dim * shape.head_dim, head_major,
                              static_cast<T*>(d_weights), stream);
    });
}

std::int64_t bias_gradient_partial_sums(const BiasGradientShape& shape) {
    return row_splits(shape) * shape.heads * shape.slots * shape.head_dim;
}

void bias_gradient(DType dtype, const BiasGradientShape& shape, const void* d_gates, float* partial_sums,
                   void* d_bias, Stream stream) {
    const std::int64_t columns = shape.heads * shape.slots * shape.head_dim;
    const std::int64_t splits = row_splits(shape);
    cuda::visit_dtype(dtype, [&]<class T>(T) {
        bias_partial_kernel<T>
            <<<dim3(blocks_for(columns), static_cast<unsigned>(splits)), kThreads, 0, stream>>>(
                shape.rows, columns, splits, static_cast<const T*>(d_gates), partial_sums);
        cuda::check_launch("bias_partial_kernel");
        bias_final_kernel<T><<<blocks_for(columns), kThreads, 0, stream>>>(shape, splits, partial_sums,
                                                                           static_cast<T*>(d_bias));
        cuda::check_launch("bias_final_kernel");
    });
}

} // namespace flashrnn::alternating
