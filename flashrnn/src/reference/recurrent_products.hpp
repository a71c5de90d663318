// The three per-head matrix products of the recurrence, on raw row-major buffers through Eigen maps:
//   forward    Y[b, k, h, :]  = R[k, h] @ s0[b, h, :]
//   backward   dR[k, h]      += dY[:, k, h, :]^T @ s0[:, h, :]
//              dS0[b, h, :]   = sum_k R[k, h]^T @ dY[b, k, h, :]
// s0 is one time slice [B, NH, DH] of the state sequence; Y and dY are [B, G_rec, NH, DH].
#pragma once

#include <Eigen/Core>
#include <cstdint>

namespace flashrnn::reference::detail {

struct RecurrentProducts {
    std::int64_t batch, recurrent_gates, heads, head_dim;

    // Element (b, k, h, d) of a [B, G_rec, NH, DH] buffer.
    std::int64_t offset(std::int64_t b, std::int64_t k, std::int64_t h, std::int64_t d) const {
        return ((b * recurrent_gates + k) * heads + h) * head_dim + d;
    }
    std::int64_t size() const { return batch * recurrent_gates * heads * head_dim; }

    using Matrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
    using ConstStrided = Eigen::Map<const Matrix, Eigen::Unaligned, Eigen::OuterStride<>>;
    using Strided = Eigen::Map<Matrix, Eigen::Unaligned, Eigen::OuterStride<>>;

    // One head of a [B, NH, DH] slice: a B x DH matrix.
    ConstStrided state_head(const double* slice, std::int64_t h) const {
        return {slice + h * head_dim, batch, head_dim, Eigen::OuterStride<>(heads * head_dim)};
    }
    Strided state_head(double* slice, std::int64_t h) const {
        return {slice + h * head_dim, batch, head_dim, Eigen::OuterStride<>(heads * head_dim)};
    }
    // One (gate, head) of a [B, G_rec, NH, DH] buffer: a B x DH matrix.
    ConstStrided gate_head(const double* buffer, std::int64_t k, std::int64_t h) const {
        return {buffer + (k * heads + h) * head_dim, batch, head_dim,
                Eigen::OuterStride<>(recurrent_gates * heads * head_dim)};
    }
    Strided gate_head(double* buffer, std::int64_t k, std::int64_t h) const {
        return {buffer + (k * heads + h) * head_dim, batch, head_dim,
                Eigen::OuterStride<>(recurrent_gates * heads * head_dim)};
    }
    // Block (k, h) of R [G_rec, NH, DH, DH]: DH x DH, row = new gate unit, column = previous state unit.
    ConstStrided weight_block(const double* weights, std::int64_t k, std::int64_t h) const {
        return {weights + (k * heads + h) * head_dim * head_dim, head_dim, head_dim,
                Eigen::OuterStride<>(head_dim)};
    }
    Strided weight_block(double* weights, std::int64_t k, std::int64_t h) const {
        return {weights + (k * heads + h) * head_dim * head_dim, head_dim, head_dim,
                Eigen::OuterStride<>(head_dim)};
    }

    void forward(const double* weights, const double* s0, double* y) const {
        for (std::int64_t k = 0; k < recurrent_gates; ++k)
            for (std::int64_t h = 0; h < heads; ++h)
                gate_head(y, k, h).noalias() = state_head(s0, h) * weight_block(weights, k, h).transpose();
    }

    void accumulate_weight_gradient(const double* dy, const double* s0, double* d_weights) const {
        for (std::int64_t k = 0; k < recurrent_gates; ++k)
            for (std::int64_t h = 0; h < heads; ++h)
                weight_block(d_weights, k, h).noalias() +=
                    gate_head(dy, k, h).transpose() * state_head(s0, h);
    }

    void backward_to_state(const double* weights, const double* dy, double* ds0) const {
        for (std::int64_t h = 0; h < heads; ++h) {
            Strided out = state_head(ds0, h);
            out.setZero();
            for (std::int64_t k = 0; k < recurrent_gates; ++k)
                out.noalias() += gate_head(dy, k, h) * weight_block(weights, k, h);
        }
    }
};

} // namespace flashrnn::reference::detail
