// linrec on the GPU against the float64 CPU reference.
//  - Exact: c in {-1, 1}, x and dy in {-1, 0, 1}: every partial result is an integer that fp32 holds,
//    so the GPU must match the reference bit for bit (after the same rounding to the dtype), for every
//    compiled configuration, the ref and tile kernels, both directions, lengths from 1 to 2^20, dense
//    and row-strided (aligned and misaligned) rows; the gaps between rows are never written.
//  - Random data with tolerances per dtype (scan_test_support.hpp).
//  - Bad arguments are refused before any launch.
#include <doctest/doctest.h>

#include <cuda_runtime_api.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "flashrnn/core/error.hpp"
#include "flashrnn/scan/linrec.hpp"
#include "flashrnn/scan/reference.hpp"
#include "scan_test_support.hpp"

using namespace flashrnn;
using namespace flashrnn::scan_testing;

namespace {

constexpr std::array<std::int64_t, 10> kExactLengths{1, 2, 31, 33, 511, 512, 513, 4097, 65537, 1 << 20};
constexpr std::array<DType, 3> kDtypes{DType::fp32, DType::bf16, DType::fp16};

// Every way of running linrec the tests exercise: the ref kernel, the model's choice, the tile
// variant (short rows), and every compiled configuration of the pipe.
struct Run {
    linrec::Options options;
    std::string name;
};

std::vector<Run> runs_for(std::int64_t length) {
    std::vector<Run> runs{{{linrec::Variant::ref, std::nullopt}, "ref"},
                          {{linrec::Variant::automatic, std::nullopt}, "automatic"}};
    if (length <= 4096) runs.push_back({{linrec::Variant::tile, std::nullopt}, "tile"});
    for (int e : kLinrecDomains.elements_per_thread)
        for (int t : kLinrecDomains.threads_per_block)
            for (ScanAccess a : kLinrecDomains.accesses) {
                const ScanConfig config{e, t, a};
                runs.push_back({{linrec::Variant::pipe, config}, "pipe " + describe(config)});
            }
    return runs;
}

std::int64_t stride_for(std::size_t case_index, std::int64_t length) {
    switch (case_index % 3) {
    case 1:
        return length + 5; // misaligned rows: vector access falls back
    case 2:
        return length + 8; // a view of a wider tensor, rows still 16-byte aligned
    default:
        return length;
    }
}

void sync() {
    cuda_ok(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
}

} // namespace

TEST_CASE("linrec exact: integer data, every configuration, bit-exact") {
    std::mt19937_64 rng(2024);
    for (DType dtype : kDtypes)
        for (std::size_t li = 0; li < kExactLengths.size(); ++li) {
            const std::int64_t length = kExactLengths[li];
            const std::int64_t rows = length >= 65537 ? 2 : 3;
            const std::int64_t stride = stride_for(li + static_cast<std::size_t>(dtype), length);
            const ScanShape shape{rows, length};
            const auto n = static_cast<std::size_t>(rows * length);
            const auto x = random_signs(n, true, rng), c = random_signs(n, false, rng),
                       dy = random_signs(n, true, rng);
            DeviceRows dx_in(dtype, rows, length, stride), dc_in(dtype, rows, length, stride),
                ddy(dtype, rows, length, stride);
            DeviceRows dy_out(dtype, rows, length, stride), ddx(dtype, rows, length, stride),
                ddc(dtype, rows, length, stride), dyy(dtype, rows, length, stride);
            dx_in.upload(x);
            dc_in.upload(c);
            ddy.upload(dy);
            for (bool reverse : {false, true}) {
                const auto y_stored = rounded_to(dtype, reference::linrec_forward(x, c, shape, reverse));
                const auto g = reference::linrec_backward(dy, c, y_stored, shape, reverse);
                const auto dx_want = rounded_to(dtype, g.dx), dc_want = rounded_to(dtype, g.dc);
                dyy.upload(y_stored);
                for (const Run& run : runs_for(length)) {
                    CAPTURE(to_string(dtype));
                    CAPTURE(length);
                    CAPTURE(stride);
                    CAPTURE(reverse);
                    CAPTURE(run.name);
                    // forward (gaps prefilled with the sentinel, elements poisoned with NaN)
                    dy_out.upload(std::vector<double>(n, NAN));
                    linrec::forward({dtype, shape, reverse}, {dx_in.in(), dc_in.in(), dy_out.out()},
                                    run.options, nullptr);
                    sync();
                    const auto y_raw = dy_out.download();
                    const auto& y_got = y_raw.values;
                    const std::int64_t fy = first_difference(y_got, y_stored);
                    CHECK_MESSAGE(fy < 0, "y differs at " << fy << ": got " << (fy < 0 ? 0 : y_got[fy])
                                                          << ", want " << (fy < 0 ? 0 : y_stored[fy]));
                    CHECK(y_raw.gaps_untouched);
                    // backward
                    ddx.upload(std::vector<double>(n, NAN));
                    ddc.upload(std::vector<double>(n, NAN));
                    linrec::backward({dtype, shape, reverse},
                                     {ddy.in(), dc_in.in(), dyy.in(), ddx.out(), ddc.out()}, run.options,
                                     nullptr);
                    sync();
                    const auto dx_raw = ddx.download(), dc_raw = ddc.download();
                    const auto &dx_got = dx_raw.values, &dc_got = dc_raw.values;
                    const std::int64_t fx = first_difference(dx_got, dx_want),
                                       fc = first_difference(dc_got, dc_want);
                    CHECK_MESSAGE(fx < 0, "dx differs at " << fx << ": got " << (fx < 0 ? 0 : dx_got[fx])
                                                           << ", want " << (fx < 0 ? 0 : dx_want[fx]));
                    CHECK_MESSAGE(fc < 0, "dc differs at " << fc << ": got " << (fc < 0 ? 0 : dc_got[fc])
                                                           << ", want " << (fc < 0 ? 0 : dc_want[fc]));
                    CHECK(dx_raw.gaps_untouched);
                    CHECK(dc_raw.gaps_untouched);
                }
            }
        }
}

TEST_CASE("linrec random: forward, reverse and backward within the dtype's tolerance") {
    std::mt19937_64 rng(99);
    std::size_t case_index = 0;
    for (DType dtype : kDtypes)
        for (std::int64_t length : {1LL, 7LL, 33LL, 1000LL, 4097LL, 65537LL}) {
            const std::int64_t rows = 5, stride = stride_for(case_index++, length);
            const ScanShape shape{rows, length};
            const auto n = static_cast<std::size_t>(rows * length);
            // Inputs as the device sees them (rounded to the dtype); |c| <= 0.99 keeps the recurrence stable.
            const auto x = rounded_to(dtype, random_magnitudes(n, 0.1, 1.0, rng));
            const auto c = rounded_to(dtype, random_magnitudes(n, 0.5, 0.99, rng));
            const auto dy = rounded_to(dtype, random_magnitudes(n, 0.1, 1.0, rng));
            DeviceRows dx_in(dtype, rows, length, stride), dc_in(dtype, rows, length, stride),
                ddy(dtype, rows, length, stride), dyy(dtype, rows, length, stride);
            DeviceRows y_out(dtype, rows, length, stride), dx_out(dtype, rows, length, stride),
                dc_out(dtype, rows, length, stride);
            dx_in.upload(x);
            dc_in.upload(c);
            ddy.upload(dy);
            const double tol = tolerance_of(dtype);
            for (bool reverse : {false, true})
                for (const Run& run : runs_for(length)) {
                    CAPTURE(to_string(dtype));
                    CAPTURE(length);
                    CAPTURE(reverse);
                    CAPTURE(run.name);
                    y_out.poison();
                    linrec::forward({dtype, shape, reverse}, {dx_in.in(), dc_in.in(), y_out.out()},
                                    run.options, nullptr);
                    sync();
                    const auto y = y_out.download().values;
                    const auto my = worst_mismatch(y, reference::linrec_forward(x, c, shape, reverse), tol);
                    CHECK_MESSAGE(my.excess <= 0, "y " << describe(my));
                    // The backward takes the stored y (rounded), as a training step would.
                    dyy.upload(y);
                    dx_out.poison();
                    dc_out.poison();
                    linrec::backward({dtype, shape, reverse},
                                     {ddy.in(), dc_in.in(), dyy.in(), dx_out.out(), dc_out.out()},
                                     run.options, nullptr);
                    sync();
                    const auto g = reference::linrec_backward(dy, c, y, shape, reverse);
                    const auto mx = worst_mismatch(dx_out.download().values, g.dx, tol);
                    const auto mc = worst_mismatch(dc_out.download().values, g.dc, tol);
                    CHECK_MESSAGE(mx.excess <= 0, "dx " << describe(mx));
                    CHECK_MESSAGE(mc.excess <= 0, "dc " << describe(mc));
                }
        }
}

TEST_CASE("linrec small: a quick subset (for compute-sanitizer)") {
    std::mt19937_64 rng(5);
    for (DType dtype : {DType::fp32, DType::bf16})
        for (std::int64_t length : {1LL, 33LL, 513LL, 520LL, 4097LL}) {
            // misaligned rows (vector access falls back to shared), and at 520 aligned ones
            const std::int64_t rows = 3, stride = length % 8 == 0 ? length + 8 : length + 5;
            const ScanShape shape{rows, length};
            const auto n = static_cast<std::size_t>(rows * length);
            const auto x = random_signs(n, true, rng), c = random_signs(n, false, rng);
            DeviceRows dx_in(dtype, rows, length, stride), dc_in(dtype, rows, length, stride),
                y_out(dtype, rows, length, stride);
            DeviceRows dx_out(dtype, rows, length, stride), dc_out(dtype, rows, length, stride);
            dx_in.upload(x);
            dc_in.upload(c);
            for (bool reverse : {false, true}) {
                const auto y_want = rounded_to(dtype, reference::linrec_forward(x, c, shape, reverse));
                const auto g = reference::linrec_backward(x, c, y_want, shape, reverse);
                // every access scheme in a block of warps; one warp; several vector packets per thread
                for (const ScanConfig& config :
                     {ScanConfig{8, 128, ScanAccess::direct}, ScanConfig{8, 128, ScanAccess::shared},
                      ScanConfig{8, 128, ScanAccess::vector}, ScanConfig{16, 128, ScanAccess::vector},
                      ScanConfig{16, 32, ScanAccess::shared}, ScanConfig{16, 32, ScanAccess::vector}}) {
                    CAPTURE(length);
                    CAPTURE(reverse);
                    CAPTURE(describe(config));
                    const linrec::Options options{linrec::Variant::pipe, config};
                    const linrec::Problem problem{dtype, shape, reverse};
                    y_out.poison();
                    linrec::forward(problem, {dx_in.in(), dc_in.in(), y_out.out()}, options, nullptr);
                    linrec::backward(problem,
                                     {dx_in.in(), dc_in.in(), y_out.in(), dx_out.out(), dc_out.out()},
                                     options, nullptr);
                    sync();
                    CHECK(first_difference(y_out.download().values, y_want) < 0);
                    CHECK(first_difference(dx_out.download().values, rounded_to(dtype, g.dx)) < 0);
                    CHECK(first_difference(dc_out.download().values, rounded_to(dtype, g.dc)) < 0);
                }
            }
        }
}

TEST_CASE("linrec: bad arguments are refused before any launch") {
    DeviceRows a(DType::fp32, 2, 256, 256), b(DType::fp32, 2, 256, 256), y(DType::fp32, 2, 256, 256);
    const linrec::Problem problem{DType::fp32, {2, 256}};
    const linrec::Options automatic{};
    CHECK_THROWS_WITH_AS(
        linrec::forward(problem, {{nullptr, DType::fp32, {2, 256}}, b.in(), y.out()}, automatic, nullptr),
        "flashrnn::linrec::forward: x is null (a required tensor)", ShapeError);
    CHECK_THROWS_WITH_AS(
        linrec::forward({DType::fp32, {2, 0}}, {a.in(), b.in(), y.out()}, automatic, nullptr),
        doctest::Contains("got 0"), ShapeError);
    // Views of 257 elements per row, rows 256 elements apart.
    const ConstTensorView a257{a.data(), DType::fp32, {2, 257}, {256, 1}},
        b257{b.data(), DType::fp32, {2, 257}, {256, 1}};
    const TensorView y257{y.data(), DType::fp32, {2, 257}, {256, 1}};
    CHECK_THROWS_WITH_AS(linrec::forward({DType::fp32, {2, 257}}, {a257, b257, y257}, automatic, nullptr),
                         doctest::Contains("row stride 256, smaller than a row (257 elements)"), ShapeError);
    CHECK_THROWS_WITH_AS(linrec::backward(problem,
                                          {a.in(), b.in(), y.in(), {nullptr, DType::fp32, {2, 256}}, y.out()},
                                          automatic, nullptr),
                         "flashrnn::linrec::backward: dx is null (a required tensor)", ShapeError);
    CHECK_THROWS_WITH_AS(linrec::forward(problem, {a.in(), b.in(), y.out()},
                                         {linrec::Variant::pipe, ScanConfig{5, 128, ScanAccess::direct}},
                                         nullptr),
                         doctest::Contains("is not compiled"), ShapeError);
    // Rows of 200 elements of the 256-element rows.
    const ConstTensorView a200{a.data(), DType::fp32, {2, 200}, {256, 1}},
        b200{b.data(), DType::fp32, {2, 200}, {256, 1}};
    const TensorView y200{y.data(), DType::fp32, {2, 200}, {256, 1}};
    CHECK_THROWS_WITH_AS(linrec::forward({DType::fp32, {2, 200}}, {a200, b200, y200},
                                         {linrec::Variant::tile, ScanConfig{4, 32, ScanAccess::direct}},
                                         nullptr),
                         doctest::Contains("tile of at least 200"), ShapeError);
    const void* odd = static_cast<const char*>(a.data()) + 2;
    CHECK_THROWS_WITH_AS(
        linrec::forward(problem, {{odd, DType::fp32, {2, 256}}, b.in(), y.out()}, automatic, nullptr),
        doctest::Contains("x must be 4-byte aligned"), ShapeError);
}

TEST_CASE("linrec harness: a value written into a gap between rows shows") {
    for (DType dtype : kDtypes) {
        CAPTURE(to_string(dtype));
        DeviceRows rows(dtype, 2, 3, 5);
        rows.upload({1, 2, 3, 4, 5, 6});
        const auto clean = rows.download();
        CHECK(clean.gaps_untouched);
        CHECK(clean.values == std::vector<double>{1, 2, 3, 4, 5, 6});
        // Zero bytes (the value 0) into the first gap element, just past row 0.
        const auto width = static_cast<std::size_t>(bytes_of(dtype));
        cuda_ok(cudaMemset(static_cast<char*>(rows.data()) + 3 * width, 0, width), "cudaMemset");
        const auto dirty = rows.download();
        CHECK_FALSE(dirty.gaps_untouched);
        CHECK(dirty.values == clean.values);
    }
}

// The longest sequence: linrec on the longest sequence the scans accept: one row of 2^31 - 1 bf16 elements,
// forward and backward, in the exact mode (c in {-1, 1}, x and dy in {-1, 0, 1}): the states are integers
// that fp32 holds exactly (a random walk of 2^31 steps stays far below 2^24; checked), so every stored
// element must equal the reference's, rounded once to bf16. dc = y_{l-1} dx_l is one fp32 product
// (of up to ~2^34, not exact in fp32) rounded to bf16: the reference does the same product in fp32.
// Every element is compared (not only a sample): positions past 2^31 / 2 and the tail exercise the
// 64-bit index arithmetic. The data is made on the host in bf16 bits (no float64 copies: 4.3 GB per
// tensor), about 26 GB on the device and on the host.
namespace long_sequence {

using Bits = std::uint16_t; // a bf16 value's bits

float float_of(Bits b) {
    const std::uint32_t u = static_cast<std::uint32_t>(b) << 16;
    float f;
    std::memcpy(&f, &u, 4);
    return f;
}

// Round to nearest even, as __float2bfloat16_rn (no NaN occurs here).
Bits bf16_of(float f) {
    std::uint32_t u;
    std::memcpy(&u, &f, 4);
    u += 0x7FFFu + ((u >> 16) & 1u);
    return static_cast<Bits>(u >> 16);
}

std::uint64_t mix(std::uint64_t z) { // splitmix64's finaliser
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

// Element i of a pseudo-random sequence: {-1, 0, 1} (zero half the time) or, with `sign_only`, {-1, 1}.
std::vector<Bits> random_values(std::int64_t count, std::uint64_t seed, bool sign_only) {
    constexpr Bits kMinusOne = 0xBF80, kZero = 0x0000, kOne = 0x3F80;
    std::vector<Bits> v(static_cast<std::size_t>(count));
    for (std::int64_t block = 0; block * 32 < count; ++block) {
        const std::uint64_t bits = mix(seed * 0x9E3779B97F4A7C15ull + static_cast<std::uint64_t>(block));
        const std::int64_t end = std::min<std::int64_t>(count, block * 32 + 32);
        for (std::int64_t i = block * 32; i < end; ++i) {
            const unsigned k = static_cast<unsigned>(bits >> (2 * (i - block * 32))) & 3u;
            v[static_cast<std::size_t>(i)] =
                sign_only ? (k & 1u ? kOne : kMinusOne) : (k == 0 ? kMinusOne : (k == 1 ? kOne : kZero));
        }
    }
    return v;
}

struct RawDeviceBuffer {
    void* data = nullptr;
    explicit RawDeviceBuffer(std::size_t bytes) { cuda_ok(cudaMalloc(&data, bytes), "cudaMalloc"); }
    RawDeviceBuffer(const RawDeviceBuffer&) = delete;
    RawDeviceBuffer& operator=(const RawDeviceBuffer&) = delete;
    ~RawDeviceBuffer() { cudaFree(data); }
    void upload(const std::vector<Bits>& v) {
        cuda_ok(cudaMemcpy(data, v.data(), v.size() * sizeof(Bits), cudaMemcpyHostToDevice), "cudaMemcpy");
    }
    void poison(std::size_t bytes) { cuda_ok(cudaMemset(data, 0xFF, bytes), "cudaMemset"); } // bf16 NaN
    std::vector<Bits> download(std::size_t count) const {
        std::vector<Bits> v(count);
        cuda_ok(cudaMemcpy(v.data(), data, count * sizeof(Bits), cudaMemcpyDeviceToHost), "cudaMemcpy");
        return v;
    }
};

// The first index where got and want differ as values (+0 and -0 equal; NaN differs), or -1.
std::int64_t first_difference(const std::vector<Bits>& got, const std::vector<Bits>& want) {
    for (std::size_t i = 0; i < want.size(); ++i)
        if (got[i] != want[i] && !(float_of(got[i]) == float_of(want[i])))
            return static_cast<std::int64_t>(i);
    return -1;
}

std::string at(const std::vector<Bits>& got, const std::vector<Bits>& want, std::int64_t i) {
    if (i < 0) return "none";
    const auto k = static_cast<std::size_t>(i);
    return "element " + std::to_string(i) + ": got " + std::to_string(float_of(got[k])) + ", want " +
           std::to_string(float_of(want[k]));
}

} // namespace long_sequence

TEST_CASE("linrec long: one bf16 sequence of length 2^31 - 1, forward and backward, bit-exact") {
    using namespace long_sequence;
    const std::int64_t length = kMaxScanLength;
    const auto n = static_cast<std::size_t>(length);
    const std::size_t bytes = n * sizeof(Bits);
    std::size_t free_bytes = 0, total_bytes = 0;
    cuda_ok(cudaMemGetInfo(&free_bytes, &total_bytes), "cudaMemGetInfo");
    if (free_bytes < 6 * bytes + (std::size_t{1} << 30)) {
        MESSAGE("skipped: needs " << 6 * bytes / 1e9 << " GB of device memory, " << free_bytes / 1e9
                                  << " GB free");
        return;
    }
    const ScanShape shape{1, length};
    const auto x = random_values(length, 1, false), c = random_values(length, 2, true),
               dy = random_values(length, 3, false);
    RawDeviceBuffer dx_in(bytes), dc_in(bytes), d_dy(bytes), d_y(bytes), d_dx(bytes), d_dc(bytes);
    dx_in.upload(x);
    dc_in.upload(c);
    d_dy.upload(dy);
    d_y.poison(bytes);
    d_dx.poison(bytes);
    d_dc.poison(bytes);
    const linrec::Problem problem{DType::bf16, shape};
    const linrec::Options automatic{};
    CAPTURE(describe(linrec::config(problem, false, true)));
    CAPTURE(describe(linrec::config(problem, true, true)));
    auto in = [&](const RawDeviceBuffer& b) { return ConstTensorView{b.data, DType::bf16, {1, length}}; };
    auto out = [&](const RawDeviceBuffer& b) { return TensorView{b.data, DType::bf16, {1, length}}; };
    linrec::forward(problem, {in(dx_in), in(dc_in), out(d_y)}, automatic, nullptr);
    linrec::backward(problem, {in(d_dy), in(dc_in), in(d_y), out(d_dx), out(d_dc)}, automatic, nullptr);
    cuda_ok(cudaDeviceSynchronize(), "cudaDeviceSynchronize");

    // Forward: y_l = c_l y_{l-1} + x_l.
    std::vector<Bits> want(n);
    double h = 0, largest = 0;
    for (std::size_t l = 0; l < n; ++l) {
        h = float_of(c[l]) * h + float_of(x[l]);
        largest = std::max(largest, std::abs(h));
        want[l] = bf16_of(static_cast<float>(h));
    }
    REQUIRE(largest < 16777216.0); // the premise of exactness
    const auto y = d_y.download(n);
    const std::int64_t fy = first_difference(y, want);
    CHECK_MESSAGE(fy < 0, "y differs at " << at(y, want, fy));
    // Backward from the stored y: dx_l = dy_l + c_{l+1} dx_{l+1}, dc_l = y_{l-1} dx_l.
    const auto dx = d_dx.download(n);
    {
        double g = 0, largest_g = 0;
        for (std::size_t l = n; l-- > 0;) {
            const double c_after = l + 1 < n ? float_of(c[l + 1]) : 0.0;
            g = c_after * g + float_of(dy[l]);
            largest_g = std::max(largest_g, std::abs(g));
            want[l] = bf16_of(static_cast<float>(g));
        }
        REQUIRE(largest_g < 16777216.0);
    }
    const std::int64_t fx = first_difference(dx, want);
    CHECK_MESSAGE(fx < 0, "dx differs at " << at(dx, want, fx));
    const auto dc = d_dc.download(n);
    {
        double g = 0;
        for (std::size_t l = n; l-- > 0;) {
            const double c_after = l + 1 < n ? float_of(c[l + 1]) : 0.0;
            g = c_after * g + float_of(dy[l]);
            const float y_before = l > 0 ? float_of(y[l - 1]) : 0.0f;
            want[l] = bf16_of(y_before * static_cast<float>(g));
        }
    }
    const std::int64_t fc = first_difference(dc, want);
    CHECK_MESSAGE(fc < 0, "dc differs at " << at(dc, want, fc));
}
