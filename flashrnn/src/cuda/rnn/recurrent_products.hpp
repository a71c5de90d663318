// The three recurrent matrix products of the alternating backend, one cuBLAS strided-batched call
// each, batched over heads (fp32 accumulation, fp32 results). R is in head-major order
// [NH, G_rec, DH, DH], so that the gate blocks of one head form one [G_rec * DH, DH] matrix; the gate
// buffers are [rows, NH, slots, DH] with the G_rec recurrent gates in the first slots (gate_slots.hpp).
#pragma once

#include <cstdint>

#include <cublas_v2.h>

#include "flashrnn/core/dtype.hpp"

namespace flashrnn::alternating {

struct HeadProductShape {
    std::int64_t batch, heads, recurrent_gates, slots, head_dim;
};

// y[b, h, k, :] = R[k, h] @ state[b, h, :]; state [B, NH, DH] in dtype, y [B, NH, G_rec, DH] fp32.
void recurrent_products(cublasHandle_t handle, DType dtype, const HeadProductShape& shape,
                        const void* weights_head_major, const void* state, float* y);

// through_r[b, h, :] = sum_k R[k, h]^T @ d_gates[b, h, k, :]; d_gates [B, NH, slots, DH] in dtype.
// From DH = 128 on, when the recurrent gates fill every slot (LSTM, sLSTM, Elman), the G_rec terms
// stay separate: through_r [B, NH, G_rec, DH] fp32 holds one part per gate (state_gradient_parts),
// summed by the reader. The product is then NH x G_rec matrices of depth DH instead of NH of depth
// G_rec x DH, for which cuBLAS takes a split-K kernel plus a reducing kernel at (NH, DH) = (1, 768).
// Measured on the H100 (B = 16, T = 1024, bf16, forward + backward in a graph): 2.5 ms faster at
// (1, 768), 0.5 at (3, 256), 0.1 at (6, 128); slower at DH <= 64 (0.1 ms at 64, 3.8 at 16), where
// through_r [B, NH, DH] holds the sum (as for the GRU, whose slots are not spaced like R's blocks).
int state_gradient_parts(const HeadProductShape& shape);
void state_gradient_products(cublasHandle_t handle, DType dtype, const HeadProductShape& shape,
                             const void* weights_head_major, const void* d_gates, float* through_r);

// d_weights[h, k] = sum_rows d_gates[row, h, k, :]^T @ states[row, h, :] over `rows` rows (all steps
// and sequences): d_gates [rows, NH, slots, DH] and states [rows, NH, DH] in dtype, d_weights
// [NH, G_rec, DH, DH] fp32.
void weight_gradient_products(cublasHandle_t handle, DType dtype, const HeadProductShape& shape,
                              std::int64_t rows, const void* d_gates, const void* states,
                              float* d_weights_head_major);

} // namespace flashrnn::alternating
