// The scans' argument checks (run before any CUDA call): shapes, null pointers, strides, alignment.
#include "flashrnn/linrec.hpp"
#include "flashrnn/rglru.hpp"
#include "flashrnn/scan.hpp"

#include <doctest/doctest.h>

#include <cstdint>
#include <stdexcept>

using namespace flashrnn;

TEST_CASE("scan arguments: shapes") {
    CHECK_NOTHROW(check_scan_shape("f", {1, 1}));
    CHECK_NOTHROW(check_scan_shape("f", {3, kMaxScanLength}));
    CHECK_THROWS_WITH_AS(check_scan_shape("f", {0, 5}),
                         "flashrnn::f: the number of sequences must be at least 1, got 0",
                         std::invalid_argument);
    CHECK_THROWS_WITH_AS(check_scan_shape("f", {2, 0}),
                         "flashrnn::f: the sequence length must be in [1, 2147483647], got 0",
                         std::invalid_argument);
    CHECK_THROWS_AS(check_scan_shape("f", {2, kMaxScanLength + 1}), std::invalid_argument);
}

TEST_CASE("scan arguments: RG-LRU shapes (kernels and reference)") {
    CHECK_NOTHROW(check_rglru_shape("g", {2, 3, 5}));
    CHECK_THROWS_WITH_AS(check_rglru_shape("g", {1, 0, 8}),
                         "flashrnn::g: batch and channels must be at least 1, got 1 and 0",
                         std::invalid_argument);
    CHECK_THROWS_WITH_AS(check_rglru_shape("g", {0, 2, 8}), doctest::Contains("got 0 and 2"),
                         std::invalid_argument);
    CHECK_THROWS_WITH_AS(check_rglru_shape("g", {1, 2, 0}),
                         "flashrnn::g: the sequence length must be in [1, 2147483647], got 0",
                         std::invalid_argument);
}

TEST_CASE("scan arguments: rows") {
    alignas(16) static float buffer[64];
    const ScanShape shape{4, 10};
    CHECK_NOTHROW(check_rows("f", "x", buffer, 10, shape, DType::fp32));
    CHECK_NOTHROW(check_rows("f", "x", buffer + 1, 16, shape, DType::fp32)); // a view of a wider tensor
    CHECK_THROWS_WITH_AS(check_rows("f", "x", nullptr, 10, shape, DType::fp32),
                         "flashrnn::f: x is a null pointer", std::invalid_argument);
    CHECK_THROWS_WITH_AS(check_rows("f", "dy", buffer, 9, shape, DType::bf16),
                         "flashrnn::f: dy has row stride 9, smaller than the sequence length 10",
                         std::invalid_argument);
    const void* odd = reinterpret_cast<const char*>(buffer) + 1;
    CHECK_THROWS_WITH_AS(check_rows("f", "c", odd, 10, shape, DType::bf16),
                         "flashrnn::f: c is not aligned to its element size (2 bytes)",
                         std::invalid_argument);
    CHECK_THROWS_AS(check_rows("f", "c", buffer, INT64_MAX / 2, {4, 10}, DType::fp32), std::invalid_argument);
}

TEST_CASE("scan arguments: alignment of rows for vector access") {
    alignas(16) static float buffer[64];
    CHECK(rows_aligned(buffer, 8, DType::fp32, 16));
    CHECK_FALSE(rows_aligned(buffer, 6, DType::fp32, 16)); // 24-byte rows
    CHECK(rows_aligned(buffer, 6, DType::fp32, 8));
    CHECK_FALSE(rows_aligned(buffer + 1, 8, DType::fp32, 16));
}

TEST_CASE("linrec variants by name") {
    CHECK(parse_linrec_variant("pipe") == LinrecVariant::pipe);
    CHECK(to_string(LinrecVariant::ref) == "ref");
    CHECK_THROWS_WITH_AS(parse_linrec_variant("fast"), doctest::Contains("unknown linrec variant 'fast'"),
                         std::invalid_argument);
}
