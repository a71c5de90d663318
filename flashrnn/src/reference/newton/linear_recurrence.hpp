// The float64 solve of x_l = J_l x_{l-1} + r_l (reverse: x_l = J_l x_{l+1} + r_l) over one sequence of
// N-vectors (N = 1: diagonal Jacobians, N = 2: 2x2 blocks), by forward substitution or as the GPU's
// chunked prefix scan over affine maps. Shared by the reference reduction, Newton solver and backward.
#pragma once

#include <array>
#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "flashrnn/core/error.hpp"
#include "flashrnn/newton/reference.hpp"

namespace flashrnn::reference::detail {

template <int N> using Vector = std::array<double, N>;
template <int N> using Matrix = std::array<double, N * N>; // row-major: m[i * N + j]

template <int N> Vector<N> matrix_vector(const Matrix<N>& m, const Vector<N>& x) {
    Vector<N> y{};
    for (int i = 0; i < N; ++i)
        for (int j = 0; j < N; ++j)
            y[i] += m[i * N + j] * x[j];
    return y;
}

template <int N> Matrix<N> matrix_matrix(const Matrix<N>& a, const Matrix<N>& b) {
    Matrix<N> c{};
    for (int i = 0; i < N; ++i)
        for (int k = 0; k < N; ++k)
            for (int j = 0; j < N; ++j)
                c[i * N + j] += a[i * N + k] * b[k * N + j];
    return c;
}

template <int N> Matrix<N> transpose(const Matrix<N>& m) {
    Matrix<N> t{};
    for (int i = 0; i < N; ++i)
        for (int j = 0; j < N; ++j)
            t[i * N + j] = m[j * N + i];
    return t;
}

// The affine map x -> a x + b: one equation of the system, or the composition of consecutive ones.
template <int N> struct Affine {
    Matrix<N> a{};
    Vector<N> b{};

    Vector<N> apply(const Vector<N>& x) const {
        Vector<N> y = matrix_vector<N>(a, x);
        for (int i = 0; i < N; ++i)
            y[i] += b[i];
        return y;
    }
    // `first`, then `second`: x -> a2 (a1 x + b1) + b2.
    static Affine then(const Affine& first, const Affine& second) {
        return {matrix_matrix<N>(second.a, first.a), second.apply(first.b)};
    }
};

template <int N>
void solve_recurrence(std::span<const Matrix<N>> jacobians, std::span<const Vector<N>> rhs,
                      std::span<Vector<N>> x, bool reverse, ReductionMethod method, int chunk_size) {
    const std::size_t L = rhs.size();
    // Position i of the traversal is equation at(i) of the sequence.
    const auto at = [&](std::size_t i) { return reverse ? L - 1 - i : i; };
    const auto equation = [&](std::size_t i) { return Affine<N>{jacobians[at(i)], rhs[at(i)]}; };
    if (method == ReductionMethod::sequential) {
        Vector<N> previous{};
        for (std::size_t i = 0; i < L; ++i) {
            previous = equation(i).apply(previous);
            x[at(i)] = previous;
        }
        return;
    }
    if (chunk_size < 1)
        throw ShapeError("flashrnn::reference: the chunk size must be at least 1, got " +
                         std::to_string(chunk_size));
    // Thread level: each chunk composes its equations by forward substitution.
    const auto chunk = static_cast<std::size_t>(chunk_size);
    const std::size_t chunks = (L + chunk - 1) / chunk;
    std::vector<Affine<N>> totals(chunks);
    for (std::size_t k = 0; k < chunks; ++k) {
        Affine<N> total = equation(k * chunk);
        for (std::size_t i = k * chunk + 1; i < std::min(L, (k + 1) * chunk); ++i)
            total = Affine<N>::then(total, equation(i));
        totals[k] = total;
    }
    // Parallel reduction over the chunks (Alg. 1b): after the step of distance d, chunk k's map covers
    // chunks k - 2d + 1 .. k; every step reads the previous step's maps only.
    for (std::size_t distance = 1; distance < chunks; distance *= 2) {
        std::vector<Affine<N>> next = totals;
        for (std::size_t k = distance; k < chunks; ++k)
            next[k] = Affine<N>::then(totals[k - distance], totals[k]);
        totals = std::move(next);
    }
    // Each chunk from the value before it: the previous chunk's prefix applied to x_{-1} = 0.
    for (std::size_t k = 0; k < chunks; ++k) {
        Vector<N> previous = k == 0 ? Vector<N>{} : totals[k - 1].b;
        for (std::size_t i = k * chunk; i < std::min(L, (k + 1) * chunk); ++i) {
            previous = equation(i).apply(previous);
            x[at(i)] = previous;
        }
    }
}

} // namespace flashrnn::reference::detail
