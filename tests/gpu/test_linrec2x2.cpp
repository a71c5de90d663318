// The scan core with 2x2 block elements (src/cuda/scan/linrec2x2.hpp: h_l = A_l h_{l-1} + b_l over
// 2-vectors, the same pipe and block scan as linrec) against a float64 loop written here.
//  - Exact: every A_l a signed permutation matrix (entries in {-1, 0, 1}, one non-zero per row and
//    column) and b_l in {-1, 0, 1}^2: every partial product is again a signed permutation and every
//    partial sum an integer below 2^24, so the GPU must match the loop bit for bit, up to L = 2^20.
//  - Random contracting matrices (|a00| + |a01| and |a10| + |a11| below 0.9) with fp32 tolerances.
//  - Bad arguments are refused before any launch.
#include <doctest/doctest.h>

#include <cuda_runtime_api.h>

#include <array>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "cuda/scan/linrec2x2.hpp"
#include "device_tensor.hpp"
#include "flashrnn/device_tensor.hpp"

#ifdef FLASHRNN_WITH_CUDA // the entry point is part of the CUDA build only

using namespace flashrnn;
using flashrnn::cuda::scan::linrec2x2_forward;
using flashrnn::testing::compare;
using flashrnn::testing::cuda_ok;
using flashrnn::testing::Tolerance;

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
        linrec2x2_forward(shape, static_cast<const float*>(a_gpu.data()), static_cast<const float*>(b_gpu.data()),
                          static_cast<float*>(h_gpu.data()), nullptr);
        cuda_ok(cudaDeviceSynchronize(), "linrec2x2_forward");
        return h_gpu.download();
    }
};

Problem signed_permutations(const ScanShape& shape, std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::uniform_int_distribution<int> pick(0, 7), unit(-1, 1);
    Problem p{shape, {}, {}};
    const auto elements = static_cast<std::size_t>(shape.sequences * shape.length);
    p.a.resize(4 * elements);
    p.b.resize(2 * elements);
    for (std::size_t e = 0; e < elements; ++e) {
        const int k = pick(rng);
        const double first = (k & 1) ? -1.0 : 1.0, second = (k & 2) ? -1.0 : 1.0;
        const bool swap = k & 4; // [[0, +-1], [+-1, 0]] or diagonal
        p.a[4 * e] = swap ? 0.0 : first;
        p.a[4 * e + 1] = swap ? first : 0.0;
        p.a[4 * e + 2] = swap ? second : 0.0;
        p.a[4 * e + 3] = swap ? 0.0 : second;
        p.b[2 * e] = unit(rng);
        p.b[2 * e + 1] = unit(rng);
    }
    return p;
}

Problem contracting(const ScanShape& shape, std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> entry(-0.45, 0.45), offset(-1.0, 1.0);
    Problem p{shape, {}, {}};
    const auto elements = static_cast<std::size_t>(shape.sequences * shape.length);
    p.a.resize(4 * elements);
    p.b.resize(2 * elements);
    for (double& v : p.a)
        v = static_cast<double>(static_cast<float>(entry(rng))); // fp32 inputs, so the loop sees what the GPU sees
    for (double& v : p.b)
        v = static_cast<double>(static_cast<float>(offset(rng)));
    return p;
}

void check_exact(const ScanShape& shape, std::uint64_t seed) {
    const Problem p = signed_permutations(shape, seed);
    const std::vector<double> gpu = p.on_gpu(), expected = p.reference();
    std::size_t mismatches = 0, first = 0;
    for (std::size_t i = 0; i < gpu.size(); ++i)
        if (!(gpu[i] == expected[i]) && mismatches++ == 0) first = i;
    INFO("rows " << shape.sequences << ", length " << shape.length << ": first mismatch at " << first);
    CHECK(mismatches == 0);
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
        const auto check = compare(p.on_gpu(), p.reference(), Tolerance{2e-5, 2e-5});
        INFO("length " << length << ": " << check.describe("h"));
        CHECK(check.ok);
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
                         "flashrnn::linrec2x2_forward: a is a null pointer", std::invalid_argument);
    CHECK_THROWS_WITH_AS(linrec2x2_forward({2, 0}, af, bf, hf, nullptr), doctest::Contains("got 0"),
                         std::invalid_argument);
    CHECK_THROWS_WITH_AS(linrec2x2_forward(shape, af + 2, bf, hf, nullptr),
                         "flashrnn::linrec2x2_forward: a is not aligned to 16 bytes", std::invalid_argument);
    CHECK_THROWS_WITH_AS(linrec2x2_forward(shape, af, bf, hf + 1, nullptr),
                         "flashrnn::linrec2x2_forward: h is not aligned to 8 bytes", std::invalid_argument);
}

#endif // FLASHRNN_WITH_CUDA
