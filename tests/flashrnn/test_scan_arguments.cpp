// The scans' argument checks (run before any CUDA call): shapes, the row tensors' views (null
// pointers, dtypes, sizes, strides, alignment), and the calls' boundary.
#include "flashrnn/core/error.hpp"
#include "flashrnn/core/tensor.hpp"
#include "flashrnn/scan/linrec.hpp"
#include "flashrnn/scan/rglru.hpp"
#include "flashrnn/scan/rows.hpp"

#include <doctest/doctest.h>

#include <cstdint>

using namespace flashrnn;

TEST_CASE("scan arguments: shapes") {
    CHECK_NOTHROW(check_scan_shape("f", {1, 1}));
    CHECK_NOTHROW(check_scan_shape("f", {3, kMaxScanLength}));
    CHECK_THROWS_WITH_AS(check_scan_shape("f", {0, 5}),
                         "flashrnn::f: the number of sequences must be at least 1, got 0", ShapeError);
    CHECK_THROWS_WITH_AS(check_scan_shape("f", {2, 0}),
                         "flashrnn::f: the sequence length must be in [1, 2147483647], got 0", ShapeError);
    CHECK_THROWS_AS(check_scan_shape("f", {2, kMaxScanLength + 1}), ShapeError);
}

TEST_CASE("scan arguments: RG-LRU shapes (kernels and reference)") {
    CHECK_NOTHROW(check_rglru_shape("g", {2, 3, 5}));
    CHECK_THROWS_WITH_AS(check_rglru_shape("g", {1, 0, 8}),
                         "flashrnn::g: batch and channels must be at least 1, got 1 and 0", ShapeError);
    CHECK_THROWS_WITH_AS(check_rglru_shape("g", {0, 2, 8}), doctest::Contains("got 0 and 2"), ShapeError);
    CHECK_THROWS_WITH_AS(check_rglru_shape("g", {1, 2, 0}),
                         "flashrnn::g: the sequence length must be in [1, 2147483647], got 0", ShapeError);
}

TEST_CASE("scan arguments: rows") {
    alignas(16) static float buffer[64];
    const ScanShape shape{4, 10};
    CHECK_NOTHROW(check_rows("f", "x", {buffer, DType::fp32, {4, 10}}, DType::fp32, shape));
    CHECK_NOTHROW(check_rows("f", "x", {buffer, DType::fp32, {4, 10}, {10, 1}}, DType::fp32, shape));
    // a view of a wider tensor
    CHECK_NOTHROW(check_rows("f", "x", {buffer + 1, DType::fp32, {4, 10}, {16, 1}}, DType::fp32, shape));
    CHECK_THROWS_WITH_AS(check_rows("f", "x", {nullptr, DType::fp32, {4, 10}}, DType::fp32, shape),
                         "f: x is null (a required tensor)", ShapeError);
    CHECK_THROWS_WITH_AS(check_rows("f", "dy", {buffer, DType::bf16, {4, 10}, {9, 1}}, DType::bf16, shape),
                         "f: dy has row stride 9, smaller than a row (10 elements)", ShapeError);
    const void* odd = reinterpret_cast<const char*>(buffer) + 1;
    CHECK_THROWS_WITH_AS(check_rows("f", "c", {odd, DType::bf16, {4, 10}}, DType::bf16, shape),
                         "f: c must be 2-byte aligned (cudaMalloc gives 256)", ShapeError);
    CHECK_THROWS_WITH_AS(
        check_rows("f", "c", {buffer, DType::fp32, {4, 10}, {INT64_MAX / 2, 1}}, DType::fp32, shape),
        doctest::Contains("c: 4 rows of stride 4611686018427387903 exceed 2^63 bytes"), ShapeError);
    // The view's dtype and sizes against the problem's, named as in the documentation.
    CHECK_THROWS_WITH_AS(check_rows("f", "x", {buffer, DType::bf16, {4, 10}}, DType::fp32, shape),
                         "f: x: expected [sequences=4, L=10] fp32, got [4, 10] bf16", ShapeError);
    CHECK_THROWS_WITH_AS(check_rows("f", "x", {buffer, DType::fp32, {4, 9}}, DType::fp32, shape, "B*R"),
                         "f: x: expected [B*R=4, L=10] fp32, got [4, 9] fp32", ShapeError);
    CHECK_THROWS_WITH_AS(check_rows("f", "x", {buffer, DType::fp32, {40}}, DType::fp32, shape),
                         "f: x: expected [sequences=4, L=10] fp32, got [40] fp32", ShapeError);
    // The time axis must be contiguous.
    CHECK_THROWS_WITH_AS(check_rows("f", "x", {buffer, DType::fp32, {4, 10}, {10, 2}}, DType::fp32, shape),
                         "f: x must be dense in every dimension but the first, got strides [10, 2]",
                         ShapeError);
}

TEST_CASE("scan arguments: alignment of rows for vector access") {
    alignas(16) static float buffer[64];
    CHECK(row_stride({buffer, DType::fp32, {2, 6}}) == 6);
    CHECK(row_stride({buffer, DType::fp32, {2, 6}, {8, 1}}) == 8);
    CHECK(rows_aligned({buffer, DType::fp32, {2, 8}}, 16));
    CHECK_FALSE(rows_aligned({buffer, DType::fp32, {2, 6}}, 16)); // 24-byte rows
    CHECK(rows_aligned({buffer, DType::fp32, {2, 6}}, 8));
    CHECK(rows_aligned({buffer, DType::fp32, {2, 6}, {8, 1}}, 16)); // 6 of every 8 elements
    CHECK_FALSE(rows_aligned({buffer + 1, DType::fp32, {2, 8}}, 16));
}

TEST_CASE("linrec variants by name") {
    CHECK(linrec::parse_variant("pipe") == linrec::Variant::pipe);
    CHECK(to_string(linrec::Variant::ref) == "ref");
    CHECK_THROWS_WITH_AS(linrec::parse_variant("fast"), doctest::Contains("unknown linrec variant 'fast'"),
                         UnsupportedError);
}

// The calls check every view before any CUDA call: host buffers serve (nothing is launched).
TEST_CASE("scan calls: every tensor is checked at the boundary") {
    alignas(16) static float buffer[64];
    const ConstTensorView in{buffer, DType::fp32, {2, 8}};
    const TensorView out{buffer + 16, DType::fp32, {2, 8}};
    const linrec::Problem linrec_problem{DType::fp32, {2, 8}};
    const rglru::Problem rglru_problem{DType::fp32, {1, 2, 8}};
    const ConstTensorView lambda{buffer + 32, DType::fp32, {2}};
#ifdef FLASHRNN_WITH_CUDA
    CHECK_THROWS_WITH_AS(
        linrec::forward(linrec_problem, {in, {buffer, DType::bf16, {2, 8}}, out}, {}, nullptr),
        "flashrnn::linrec::forward: c: expected [sequences=2, L=8] fp32, got [2, 8] bf16", ShapeError);
    CHECK_THROWS_WITH_AS(linrec::forward(linrec_problem, {in, in, {}}, {}, nullptr),
                         "flashrnn::linrec::forward: y is null (a required tensor)", ShapeError);
    CHECK_THROWS_WITH_AS(
        linrec::backward(linrec_problem, {in, in, in, out, {buffer + 16, DType::fp32, {2, 9}}}, {}, nullptr),
        "flashrnn::linrec::backward: dc: expected [sequences=2, L=8] fp32, got [2, 9] fp32", ShapeError);
    CHECK_THROWS_WITH_AS(linrec::forward({DType::fp32, {2, 0}}, {in, in, out}, {}, nullptr),
                         "flashrnn::linrec::forward: the sequence length must be in [1, 2147483647], got 0",
                         ShapeError);
    const rglru::ForwardArgs forward{in, in, in, lambda, {}, out, {}};
    CHECK_THROWS_WITH_AS(rglru::forward({DType::fp16, {1, 2, 8}}, forward, {}, nullptr),
                         "flashrnn::rglru::forward: dtype fp16 is not supported (fp32 or bf16)",
                         UnsupportedError);
    CHECK_THROWS_WITH_AS(rglru::forward({DType::fp32, {1, 3, 8}}, forward, {}, nullptr),
                         "flashrnn::rglru::forward: x: expected [B*R=3, L=8] fp32, got [2, 8] fp32",
                         ShapeError);
    rglru::ForwardArgs wrong_lambda = forward;
    wrong_lambda.lambda = {buffer + 32, DType::fp32, {3}};
    CHECK_THROWS_WITH_AS(rglru::forward(rglru_problem, wrong_lambda, {}, nullptr),
                         "flashrnn::rglru::forward: lambda: expected [R=2] fp32, got [3] fp32", ShapeError);
    rglru::ForwardArgs bf16_h0 = forward;
    bf16_h0.h0 = {buffer + 40, DType::bf16, {2}};
    CHECK_THROWS_WITH_AS(rglru::forward(rglru_problem, bf16_h0, {}, nullptr),
                         "flashrnn::rglru::forward: h0: expected [B*R=2] fp32, got [2] bf16", ShapeError);
    rglru::ForwardArgs wrong_h_last = forward;
    wrong_h_last.h_last = {buffer + 40, DType::fp32, {1, 2}};
    CHECK_THROWS_WITH_AS(rglru::forward(rglru_problem, wrong_h_last, {}, nullptr),
                         "flashrnn::rglru::forward: h_last: expected [B*R=2] fp32, got [1, 2] fp32",
                         ShapeError);
    const rglru::BackwardArgs backward{in, in, in, lambda, {}, in, in, {}, out, out, out, {}, {}};
    CHECK_THROWS_WITH_AS(rglru::backward(rglru_problem, backward, {}, nullptr),
                         "flashrnn::rglru::backward: d_lambda is null (a required tensor)", ShapeError);
    rglru::BackwardArgs strided_dh = backward;
    strided_dh.dh = {buffer, DType::fp32, {2, 8}, {7, 1}};
    CHECK_THROWS_WITH_AS(rglru::backward(rglru_problem, strided_dh, {}, nullptr),
                         "flashrnn::rglru::backward: dh has row stride 7, smaller than a row (8 elements)",
                         ShapeError);
#else
    CHECK_THROWS_WITH_AS(linrec::forward(linrec_problem, {in, in, out}, {}, nullptr),
                         doctest::Contains("flashrnn::linrec::forward: FlashRNN was built without CUDA"),
                         UnsupportedError);
    CHECK_THROWS_AS(linrec::backward(linrec_problem, {in, in, in, out, out}, {}, nullptr), UnsupportedError);
    CHECK_THROWS_AS(linrec::config(linrec_problem, false, true), UnsupportedError);
    CHECK_THROWS_AS(rglru::forward(rglru_problem, {in, in, in, lambda, {}, out, {}}, {}, nullptr),
                    UnsupportedError);
    CHECK_THROWS_AS(rglru::backward(rglru_problem,
                                    {in, in, in, lambda, {}, in, in, {}, out, out, out, {}, {}}, {}, nullptr),
                    UnsupportedError);
#endif
}
