// The scan core with 2x2 block elements (src/cuda/scan/linrec2x2.hpp: h_l = A_l h_{l-1} + b_l over
// 2-vectors, the same pipe and block scan as linrec) against a float64 loop written here.
//  - Exact: every A_l a signed permutation matrix (entries in {-1, 0, 1}, one non-zero per row and
//    column) and b_l in {-1, 0, 1}^2: every partial product is again a signed permutation and every
//    partial sum an integer below 2^24, so the GPU must match the loop bit for bit, up to L = 2^20.
//  - Random contracting matrices (|a00| + |a01| and |a10| + |a11| at most 0.9) within the scans' fp32
//    tolerance (scan_test_support.hpp, per element).
//  - Bad arguments are refused before any launch.
#include <doctest/doctest.h>

#include <cuda_runtime_api.h>

#include <cstdint>
#include <random>
#include <vector>

#include "cuda/scan/linrec2x2.hpp"
#include "flashrnn/core/error.hpp"
#include "scan_test_support.hpp"

#ifdef FLASHRNN_WITH_CUDA // the entry point is part of the CUDA build only

using namespace flashrnn;
using namespace flashrnn::scan_testing;
using flashrnn::cuda::scan::linrec2x2_forward;

namespace {

// Dense rows: A row-major, 4 per element; b and h 2 per element.
struct Problem {
    ScanShape shape;
    std::vector<double> a, b;

    std::vector<double> reference() const {
        std::vector<double> h(b.size());
        for (std::int64_t s = 0; s < shape.sequences; ++s) {
            double x = 0, y = 0;
            for (std::int64_t l = 0; l < shape.length; ++l) {
                const std::size_t e = static_cast<std::size_t>(s * shape.length + l);
                const double* m = &a[4 * e];
                const double nx = m[0] * x + m[1] * y + b[2 * e], ny = m[2] * x + m[3] * y + b[2 * e + 1];
                x = nx, y = ny;
                h[2 * e] = x, h[2 * e + 1] = y;
            }
        }
        return h;
    }

    std::vector<double> on_gpu() const {
        const DeviceTensor a_gpu(DType::fp32, a), b_gpu(DType::fp32, b);
        DeviceTensor h_gpu(DType::fp32, b.size());
        h_gpu.poison(); // NaN: an element the kernel does not write shows
        linrec2x2_forward(shape, static_cast<const float*>(a_gpu.data()),
                          static_cast<const float*>(b_gpu.data()), static_cast<float*>(h_gpu.data()),
                          nullptr);
        cuda_ok(cudaDeviceSynchronize(), "linrec2x2_forward");
        return h_gpu.download();
    }
};

Problem signed_permutations(const ScanShape& shape, std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::uniform_int_distribution<int> pick(0, 7);
    const auto elements = static_cast<std::size_t>(shape.sequences * shape.length);
    Problem p{shape, std::vector<double>(4 * elements), random_signs(2 * elements, true, rng)};
    for (std::size_t e = 0; e < elements; ++e) {
        const int k = pick(rng);
        const double first = (k & 1) ? -1.0 : 1.0, second = (k & 2) ? -1.0 : 1.0;
        const bool swap = k & 4; // [[0, +-1], [+-1, 0]] or diagonal
        p.a[4 * e] = swap ? 0.0 : first;
        p.a[4 * e + 1] = swap ? first : 0.0;
        p.a[4 * e + 2] = swap ? second : 0.0;
        p.a[4 * e + 3] = swap ? 0.0 : second;
    }
    return p;
}

// Inputs rounded to fp32, so that the loop sees what the GPU sees.
Problem contracting(const ScanShape& shape, std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    const auto elements = static_cast<std::size_t>(shape.sequences * shape.length);
    return {shape, rounded_to(DType::fp32, random_magnitudes(4 * elements, 0.0, 0.45, rng)),
            rounded_to(DType::fp32, random_magnitudes(2 * elements, 0.0, 1.0, rng))};
}

void check_exact(const ScanShape& shape, std::uint64_t seed) {
    const Problem p = signed_permutations(shape, seed);
    const std::int64_t first = first_difference(p.on_gpu(), p.reference());
    INFO("rows " << shape.sequences << ", length " << shape.length << ": first mismatch at " << first);
    CHECK(first == -1);
}

} // namespace

TEST_CASE("linrec 2x2 small: exact with signed permutations, short rows") {
    std::uint64_t seed = 7100;
    for (std::int64_t length : {1, 2, 31, 33, 511, 512, 513, 4097})
        check_exact({3, length}, ++seed);
}

TEST_CASE("linrec 2x2 small: random contracting matrices against fp32 tolerances") {
    std::uint64_t seed = 7200;
    for (std::int64_t length : {1, 2, 33, 513, 4097, 65537}) {
        const Problem p = contracting({5, length}, ++seed);
        const Mismatch worst = worst_mismatch(p.on_gpu(), p.reference(), tolerance_of(DType::fp32));
        INFO("length " << length << ": " << describe(worst));
        CHECK(worst.index == -1);
    }
}

TEST_CASE("linrec 2x2: exact with signed permutations, long rows") {
    check_exact({2, 65537}, 7301);
    check_exact({2, 1 << 20}, 7302);
}

TEST_CASE("linrec 2x2: bad arguments are refused before any launch") {
    const DeviceTensor a(DType::fp32, 4 * 64 + 4), b(DType::fp32, 2 * 64 + 2), h(DType::fp32, 2 * 64 + 2);
    const ScanShape shape{2, 32};
    const auto* af = static_cast<const float*>(a.data());
    const auto* bf = static_cast<const float*>(b.data());
    auto* hf = static_cast<float*>(h.data());
    CHECK_THROWS_WITH_AS(linrec2x2_forward(shape, nullptr, bf, hf, nullptr),
                         "flashrnn::linrec2x2_forward: a is null (a required tensor)", ShapeError);
    CHECK_THROWS_WITH_AS(linrec2x2_forward({2, 0}, af, bf, hf, nullptr), doctest::Contains("got 0"),
                         ShapeError);
    CHECK_THROWS_WITH_AS(linrec2x2_forward(shape, af + 2, bf, hf, nullptr),
                         "flashrnn::linrec2x2_forward: a must be 16-byte aligned (cudaMalloc gives 256)",
                         ShapeError);
    CHECK_THROWS_WITH_AS(linrec2x2_forward(shape, af, bf, hf + 1, nullptr),
                         "flashrnn::linrec2x2_forward: h must be 8-byte aligned (cudaMalloc gives 256)",
                         ShapeError);
}

#endif // FLASHRNN_WITH_CUDA
