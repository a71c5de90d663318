// cuBLAS is column-major: a row-major [rows, cols] buffer with leading dimension ld is the
// column-major [cols, rows] matrix with the same ld. Each product below is written for the transposed
// (column-major) view of its row-major result.
#include "cuda/rnn/recurrent_products.hpp"
#include "flashrnn/core/error.hpp"

#include <limits>
#include <stdexcept>
#include <string>

#include "cuda/common/cuda_check.hpp"

namespace flashrnn::alternating {
namespace {

cudaDataType_t cuda_type(DType dtype) {
    switch (dtype) {
    case DType::bf16:
        return CUDA_R_16BF;
    case DType::fp16:
        return CUDA_R_16F;
    case DType::fp32:
        break;
    }
    return CUDA_R_32F;
}

int as_int(std::int64_t value, const char* what) {
    if (value > std::numeric_limits<int>::max())
        throw ShapeError("flashrnn alternating: " + std::string(what) + " = " + std::to_string(value) +
                         " exceeds cuBLAS's 32-bit sizes");
    return static_cast<int>(value);
}

struct Operand {
    const void* data;
    int leading;
    long long stride;
};

void batched_product(cublasHandle_t handle, DType dtype, cublasOperation_t op_a, cublasOperation_t op_b,
                     int m, int n, int k, Operand a, Operand b, float* c, int ldc, long long stride_c,
                     int batch, const char* what) {
    const float one = 1.0f, zero = 0.0f;
    const cudaDataType_t type = cuda_type(dtype);
    cuda::check(cublasGemmStridedBatchedEx(handle, op_a, op_b, m, n, k, &one, a.data, type, a.leading,
                                           a.stride, b.data, type, b.leading, b.stride, &zero, c, CUDA_R_32F,
                                           ldc, stride_c, batch, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
                what);
}

} // namespace

void recurrent_products(cublasHandle_t handle, DType dtype, const HeadProductShape& s,
                        const void* weights_head_major, const void* state, float* y) {
    // y_h^T [G_rec*DH x B] = R_h [G_rec*DH x DH] @ state_h^T [DH x B]
    const std::int64_t gate_rows = s.recurrent_gates * s.head_dim;
    batched_product(handle, dtype, CUBLAS_OP_T, CUBLAS_OP_N, as_int(gate_rows, "G_rec * DH"),
                    as_int(s.batch, "B"), as_int(s.head_dim, "DH"),
                    {weights_head_major, as_int(s.head_dim, "DH"), gate_rows * s.head_dim},
                    {state, as_int(s.heads * s.head_dim, "NH * DH"), s.head_dim}, y,
                    as_int(s.heads * gate_rows, "NH * G_rec * DH"), gate_rows, as_int(s.heads, "NH"),
                    "cublasGemmStridedBatchedEx (recurrent products)");
}

int state_gradient_parts(const HeadProductShape& s) {
    return s.slots == s.recurrent_gates && s.head_dim >= 128 ? static_cast<int>(s.recurrent_gates) : 1;
}

void state_gradient_products(cublasHandle_t handle, DType dtype, const HeadProductShape& s,
                             const void* weights_head_major, const void* d_gates, float* through_r) {
    const std::int64_t gate_rows = s.recurrent_gates * s.head_dim;
    if (state_gradient_parts(s) == 1) {
        // through_r_h^T [DH x B] = R_h^T [DH x G_rec*DH] @ d_gates_h^T [G_rec*DH x B]
        batched_product(
            handle, dtype, CUBLAS_OP_N, CUBLAS_OP_N, as_int(s.head_dim, "DH"), as_int(s.batch, "B"),
            as_int(gate_rows, "G_rec * DH"),
            {weights_head_major, as_int(s.head_dim, "DH"), gate_rows * s.head_dim},
            {d_gates, as_int(s.heads * s.slots * s.head_dim, "NH * G * DH"), s.slots * s.head_dim}, through_r,
            as_int(s.heads * s.head_dim, "NH * DH"), s.head_dim, as_int(s.heads, "NH"),
            "cublasGemmStridedBatchedEx (R^T products)");
        return;
    }
    // Matrix j = h * G_rec + k: through_r_{h,k}^T [DH x B] = R_{k,h}^T [DH x DH] @ d_gates_{h,k}^T [DH x B],
    // where R_{k,h} lies at j * DH * DH and, with slots = G_rec, d_gates_{h,k} and part k at j * DH.
    batched_product(
        handle, dtype, CUBLAS_OP_N, CUBLAS_OP_N, as_int(s.head_dim, "DH"), as_int(s.batch, "B"),
        as_int(s.head_dim, "DH"), {weights_head_major, as_int(s.head_dim, "DH"), s.head_dim * s.head_dim},
        {d_gates, as_int(s.heads * s.slots * s.head_dim, "NH * G * DH"), s.head_dim}, through_r,
        as_int(s.heads * gate_rows, "NH * G_rec * DH"), s.head_dim,
        as_int(s.heads * s.recurrent_gates, "NH * G_rec"), "cublasGemmStridedBatchedEx (R^T products)");
}

void weight_gradient_products(cublasHandle_t handle, DType dtype, const HeadProductShape& s,
                              std::int64_t rows, const void* d_gates, const void* states,
                              float* d_weights_head_major) {
    // dR_h^T [DH x G_rec*DH] = states_h^T [DH x rows] @ d_gates_h [rows x G_rec*DH]
    const std::int64_t gate_rows = s.recurrent_gates * s.head_dim;
    batched_product(handle, dtype, CUBLAS_OP_N, CUBLAS_OP_T, as_int(s.head_dim, "DH"),
                    as_int(gate_rows, "G_rec * DH"), as_int(rows, "T * B"),
                    {states, as_int(s.heads * s.head_dim, "NH * DH"), s.head_dim},
                    {d_gates, as_int(s.heads * s.slots * s.head_dim, "NH * G * DH"), s.slots * s.head_dim},
                    d_weights_head_major, as_int(s.head_dim, "DH"), gate_rows * s.head_dim,
                    as_int(s.heads, "NH"), "cublasGemmStridedBatchedEx (dR)");
}

} // namespace flashrnn::alternating
