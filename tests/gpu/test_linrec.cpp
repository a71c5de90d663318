// linrec on the GPU against the float64 CPU reference.
//  - Exact: c in {-1, 1}, x and dy in {-1, 0, 1}: every partial result is an integer that fp32 holds,
//    so the GPU must match the reference bit for bit (after the same rounding to the dtype), for every
//    compiled configuration, the ref and tile kernels, both directions, lengths from 1 to 2^20, dense
//    and row-strided (aligned and misaligned) rows; the gaps between rows are never written.
//  - Random data with tolerances per dtype (scan_test_support.hpp).
//  - Bad arguments are refused before any launch.
#include <doctest/doctest.h>

#include <array>
#include <random>
#include <vector>

#include "flashrnn/linrec.hpp"
#include "flashrnn/scan_reference.hpp"
#include "scan_test_support.hpp"

using namespace flashrnn;
using namespace flashrnn::scan_testing;

namespace {

constexpr std::array<std::int64_t, 10> kExactLengths{1, 2, 31, 33, 511, 512, 513, 4097, 65537, 1 << 20};
constexpr std::array<DType, 3> kDtypes{DType::fp32, DType::bf16, DType::fp16};

// Every way of running linrec the tests exercise: the ref kernel, the model's choice, the tile
// variant (short rows), and every compiled configuration of the pipe.
struct Run {
    LinrecOptions options;
    std::string name;
};

std::vector<Run> runs_for(std::int64_t length) {
    std::vector<Run> runs{{{LinrecVariant::ref, std::nullopt}, "ref"}, {{LinrecVariant::automatic, std::nullopt}, "automatic"}};
    if (length <= 4096) runs.push_back({{LinrecVariant::tile, std::nullopt}, "tile"});
    for (int e : kLinrecDomains.elements_per_thread)
        for (int t : kLinrecDomains.threads_per_block)
            for (ScanAccess a : kLinrecDomains.accesses) {
                const ScanConfig config{e, t, a};
                runs.push_back({{LinrecVariant::pipe, config}, "pipe " + describe(config)});
            }
    return runs;
}

std::int64_t stride_for(std::size_t case_index, std::int64_t length) {
    switch (case_index % 3) {
    case 1: return length + 5; // misaligned rows: vector access falls back
    case 2: return length + 8; // a view of a wider tensor, rows still 16-byte aligned
    default: return length;
    }
}

void sync() { cuda_ok(cudaDeviceSynchronize(), "cudaDeviceSynchronize"); }

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
            const auto x = random_signs(n, true, rng), c = random_signs(n, false, rng), dy = random_signs(n, true, rng);
            DeviceRows dx_in(dtype, rows, length, stride), dc_in(dtype, rows, length, stride), ddy(dtype, rows, length, stride);
            DeviceRows dy_out(dtype, rows, length, stride), ddx(dtype, rows, length, stride), ddc(dtype, rows, length, stride),
                dyy(dtype, rows, length, stride);
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
                    linrec_forward(dtype, shape, dx_in.in(), dc_in.in(), dy_out.out(), reverse, nullptr, run.options);
                    sync();
                    const auto y_raw = dy_out.download();
                    const auto& y_got = y_raw.values;
                    const std::int64_t fy = first_difference(y_got, y_stored);
                    CHECK_MESSAGE(fy < 0, "y differs at " << fy << ": got " << (fy < 0 ? 0 : y_got[fy]) << ", want "
                                                         << (fy < 0 ? 0 : y_stored[fy]));
                    CHECK(y_raw.gaps_untouched);
                    // backward
                    ddx.upload(std::vector<double>(n, NAN));
                    ddc.upload(std::vector<double>(n, NAN));
                    linrec_backward(dtype, shape, ddy.in(), dc_in.in(), dyy.in(), ddx.out(), ddc.out(), reverse, nullptr,
                                    run.options);
                    sync();
                    const auto dx_raw = ddx.download(), dc_raw = ddc.download();
                    const auto &dx_got = dx_raw.values, &dc_got = dc_raw.values;
                    const std::int64_t fx = first_difference(dx_got, dx_want), fc = first_difference(dc_got, dc_want);
                    CHECK_MESSAGE(fx < 0, "dx differs at " << fx << ": got " << (fx < 0 ? 0 : dx_got[fx]) << ", want "
                                                          << (fx < 0 ? 0 : dx_want[fx]));
                    CHECK_MESSAGE(fc < 0, "dc differs at " << fc << ": got " << (fc < 0 ? 0 : dc_got[fc]) << ", want "
                                                          << (fc < 0 ? 0 : dc_want[fc]));
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
            DeviceRows dx_in(dtype, rows, length, stride), dc_in(dtype, rows, length, stride), ddy(dtype, rows, length, stride),
                dyy(dtype, rows, length, stride);
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
                    linrec_forward(dtype, shape, dx_in.in(), dc_in.in(), y_out.out(), reverse, nullptr, run.options);
                    sync();
                    const auto y = y_out.download().values;
                    const auto my = worst_mismatch(y, reference::linrec_forward(x, c, shape, reverse), tol);
                    CHECK_MESSAGE(my.excess <= 0, "y " << describe(my));
                    // The backward takes the stored y (rounded), as a training step would.
                    dyy.upload(y);
                    dx_out.poison();
                    dc_out.poison();
                    linrec_backward(dtype, shape, ddy.in(), dc_in.in(), dyy.in(), dx_out.out(), dc_out.out(), reverse,
                                    nullptr, run.options);
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
        for (std::int64_t length : {1LL, 33LL, 513LL, 4097LL}) {
            const std::int64_t rows = 3, stride = length + 5;
            const ScanShape shape{rows, length};
            const auto n = static_cast<std::size_t>(rows * length);
            const auto x = random_signs(n, true, rng), c = random_signs(n, false, rng);
            DeviceRows dx_in(dtype, rows, length, stride), dc_in(dtype, rows, length, stride),
                y_out(dtype, rows, length, length);
            DeviceRows dx_out(dtype, rows, length, length), dc_out(dtype, rows, length, length);
            dx_in.upload(x);
            dc_in.upload(c);
            for (bool reverse : {false, true}) {
                const auto y_want = rounded_to(dtype, reference::linrec_forward(x, c, shape, reverse));
                const auto g = reference::linrec_backward(x, c, y_want, shape, reverse);
                for (ScanAccess access : kLinrecDomains.accesses) {
                    CAPTURE(length);
                    CAPTURE(reverse);
                    CAPTURE(to_string(access));
                    const LinrecOptions options{LinrecVariant::pipe, ScanConfig{8, 128, access}};
                    y_out.poison();
                    linrec_forward(dtype, shape, dx_in.in(), dc_in.in(), y_out.out(), reverse, nullptr, options);
                    linrec_backward(dtype, shape, dx_in.in(), dc_in.in(), y_out.in(), dx_out.out(), dc_out.out(), reverse,
                                    nullptr, options);
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
    const ScanShape shape{2, 256};
    CHECK_THROWS_WITH_AS(linrec_forward(DType::fp32, shape, {nullptr, 256}, b.in(), y.out(), false, nullptr),
                         "flashrnn::linrec_forward: x is a null pointer", std::invalid_argument);
    CHECK_THROWS_WITH_AS(linrec_forward(DType::fp32, {2, 0}, a.in(), b.in(), y.out(), false, nullptr),
                         doctest::Contains("got 0"), std::invalid_argument);
    CHECK_THROWS_WITH_AS(linrec_forward(DType::fp32, {2, 257}, a.in(), b.in(), y.out(), false, nullptr),
                         doctest::Contains("row stride 256, smaller than the sequence length 257"), std::invalid_argument);
    CHECK_THROWS_WITH_AS(linrec_backward(DType::fp32, shape, a.in(), b.in(), y.in(), {nullptr, 256}, y.out(), false, nullptr),
                         "flashrnn::linrec_backward: dx is a null pointer", std::invalid_argument);
    CHECK_THROWS_WITH_AS(linrec_forward(DType::fp32, shape, a.in(), b.in(), y.out(), false, nullptr,
                                        {LinrecVariant::pipe, ScanConfig{5, 128, ScanAccess::direct}}),
                         doctest::Contains("is not compiled"), std::invalid_argument);
    CHECK_THROWS_WITH_AS(linrec_forward(DType::fp32, {2, 200}, a.in(), b.in(), y.out(), false, nullptr,
                                        {LinrecVariant::tile, ScanConfig{4, 32, ScanAccess::direct}}),
                         doctest::Contains("tile of at least 200"), std::invalid_argument);
    const void* odd = static_cast<const char*>(a.data()) + 2;
    CHECK_THROWS_WITH_AS(linrec_forward(DType::fp32, shape, {odd, 256}, b.in(), y.out(), false, nullptr),
                         doctest::Contains("not aligned to its element size"), std::invalid_argument);
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
