// The three per-head matrix products of the recurrence, on raw row-major buffers through Eigen maps:
//   forward    Y[b, k, h, :]  = R[k, h] @ s0[b, h, :]
//   backward   dR[k, h]      += dY[:, k, h, :]^T @ s0[:, h, :]
//              dS0[b, h, :]   = sum_k R[k, h]^T @ dY[b, k, h, :]
// s0 is one time slice [B, NH, DH] of the state sequence; Y and dY are [B, G_rec, NH, DH]. Large
// products run in parallel over the machine's cores (parallel_tasks.hpp).
#pragma once

#include <Eigen/Core>
#include <algorithm>
#include <cstdint>
#include <utility>

#include "parallel_tasks.hpp"

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

    // Each product in tasks of kTaskColumns output columns (parallel_tasks.hpp): forward and
    // backward_to_state split their outputs' state or gate units, the weight gradient its rows of R.
    double flops() const { return 2.0 * double(batch) * recurrent_gates * heads * head_dim * head_dim; }

    void forward(const double* weights, const double* s0, double* y) const {
        each_gate_head_part([&](std::int64_t k, std::int64_t h, std::int64_t first, std::int64_t count) {
            gate_head(y, k, h).middleCols(first, count).noalias() =
                state_head(s0, h) * weight_block(weights, k, h).middleRows(first, count).transpose();
        });
    }

    void accumulate_weight_gradient(const double* dy, const double* s0, double* d_weights) const {
        each_gate_head_part([&](std::int64_t k, std::int64_t h, std::int64_t first, std::int64_t count) {
            weight_block(d_weights, k, h).middleRows(first, count).noalias() +=
                gate_head(dy, k, h).middleCols(first, count).transpose() * state_head(s0, h);
        });
    }

    void backward_to_state(const double* weights, const double* dy, double* ds0) const {
        const std::int64_t parts = column_tasks(head_dim);
        run_tasks(heads * parts, flops(), [&](std::int64_t task) {
            const std::int64_t h = task / parts;
            const auto [first, count] = columns_of(task % parts);
            auto out = state_head(ds0, h).middleCols(first, count);
            out.setZero();
            for (std::int64_t k = 0; k < recurrent_gates; ++k)
                out.noalias() += gate_head(dy, k, h) * weight_block(weights, k, h).middleCols(first, count);
        });
    }

  private:
    // task(k, h, first, count) for every (gate, head) block and part of its units, as parallel tasks.
    template <class Task> void each_gate_head_part(const Task& task) const {
        const std::int64_t parts = column_tasks(head_dim);
        run_tasks(recurrent_gates * heads * parts, flops(), [&](std::int64_t i) {
            const auto [first, count] = columns_of(i % parts);
            task(i / (heads * parts), i / parts % heads, first, count);
        });
    }
    // The first column and the count of columns of task part `part` of a head.
    std::pair<std::int64_t, std::int64_t> columns_of(std::int64_t part) const {
        const std::int64_t first = part * kTaskColumns;
        return {first, std::min(kTaskColumns, head_dim - first)};
    }
};

} // namespace flashrnn::reference::detail
