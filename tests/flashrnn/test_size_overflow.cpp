// Sizes whose tensors would not fit a signed 64-bit element or byte count are refused by the problems'
// validate functions, which every entry point calls (issue 23: T = 2^62 overflowed the layouts, DH =
// 2^32 + 64 was read as 64, NH = 2^63 - 1 gave "elements -1024").
#include "flashrnn/core/error.hpp"
#include "flashrnn/core/tensor_size.hpp"
#include "flashrnn/newton/problem.hpp"
#include "flashrnn/rnn/problem.hpp"
#include "flashrnn/scan/shape.hpp"
#include "flashrnn/tiling/scan_launch.hpp"
#include "test_support.hpp"

#include <doctest/doctest.h>

#include <cstdint>
#include <limits>

using namespace flashrnn;

namespace {

constexpr std::int64_t int64_max = std::numeric_limits<std::int64_t>::max();

ProblemShape rnn_shape(std::int64_t time_steps, std::int64_t batch, std::int64_t heads,
                       std::int64_t head_dim) {
    return ProblemShape{.time_steps = time_steps, .batch = batch, .heads = heads, .head_dim = head_dim};
}

} // namespace

TEST_CASE("size overflow: fits_tensor tests the product without overflowing") {
    CHECK(fits_tensor({}));
    CHECK(fits_tensor({kMaxTensorElements}));
    CHECK(fits_tensor({std::int64_t{1} << 30, std::int64_t{1} << 29}));
    CHECK_FALSE(fits_tensor({kMaxTensorElements, 2}));
    CHECK_FALSE(fits_tensor({std::int64_t{1} << 31, std::int64_t{1} << 31}));
    CHECK_FALSE(fits_tensor({int64_max, int64_max, 4}));
    CHECK_FALSE(fits_tensor({4, 0}));
    CHECK_FALSE(fits_tensor({-1, -1}));
}

TEST_CASE("size overflow: a recurrent problem whose tensors exceed 2^60 elements is a ShapeError") {
    // The largest cells have 4 gates and 4 states: T = 2^57 still fits, 2^59 does not.
    CHECK_NOTHROW(validate(rnn_shape(std::int64_t{1} << 57, 1, 1, 1)));
    CHECK_THROWS_WITH_AS(
        validate(rnn_shape(std::int64_t{1} << 62, 1, 1, 4)),
        "flashrnn: the problem's tensors would exceed 1152921504606846975 elements (2^60 - 1), "
        "got T=4611686018427387904, B=1, NH=1, DH=4, time-major",
        ShapeError);
    CHECK_THROWS_AS(validate(rnn_shape(std::int64_t{1} << 59, 1, 1, 1)), ShapeError);
    CHECK_THROWS_AS(validate(rnn_shape(int64_max, 1, 1, 1)), ShapeError);  // T + 1 is never formed
    CHECK_THROWS_AS(validate(rnn_shape(1, 1, 1, 4294967360)), ShapeError); // R is DH x DH
    CHECK_THROWS_AS(validate(rnn_shape(1, 1, int64_max, 64)), ShapeError);
    CHECK_THROWS_AS(validate(rnn_shape(1, int64_max, int64_max, int64_max)), ShapeError);
}

TEST_CASE("size overflow: the reference refuses the shape before reading any tensor") {
    const ProblemShape shape{3, 2, 2, 3};
    testing::RandomProblem problem(Cell::lstm, shape, 7);
    CHECK_THROWS_WITH_AS(
        reference::forward(Cell::lstm, rnn_shape(std::int64_t{1} << 62, 2, 2, 3), problem.inputs()),
        doctest::Contains("would exceed 1152921504606846975 elements"), ShapeError);
}

TEST_CASE("size overflow: a Newton problem whose tensors exceed 2^60 elements is a ShapeError") {
    CHECK_NOTHROW(
        newton::validate("newton::forward", {.time_steps = 1 << 20, .batch = 1 << 20, .units = 1 << 15}));
    CHECK_THROWS_WITH_AS(
        newton::validate("newton::forward", {.time_steps = 2, .batch = std::int64_t{1} << 62, .units = 4}),
        "flashrnn::newton::forward: the problem's tensors would exceed 1152921504606846975 elements (2^60 - "
        "1), "
        "got T=2, B=4611686018427387904, D=4",
        ShapeError);
    CHECK_THROWS_AS(
        newton::validate("newton::forward", {.time_steps = 1, .batch = int64_max, .units = int64_max}),
        ShapeError);
}

TEST_CASE("size overflow: scans of more than 2^60 elements are a ShapeError, in the launch model too") {
    CHECK_NOTHROW(check_scan_shape("linrec::forward", {std::int64_t{1} << 29, kMaxScanLength}));
    CHECK_THROWS_WITH_AS(
        check_scan_shape("linrec::forward", {int64_max, kMaxScanLength}),
        "flashrnn::linrec::forward: the rows would exceed 1152921504606846975 elements (2^60 - 1), "
        "got 9223372036854775807 sequences of length 2147483647",
        ShapeError);
    // batch x channels is tested before it is formed.
    CHECK_THROWS_WITH_AS(
        check_rglru_shape("rglru::forward", {.batch = int64_max, .channels = 4, .length = 2}),
        doctest::Contains("batch x channels would exceed"), ShapeError);
    CHECK_THROWS_WITH_AS(choose_scan_config(preset("h100_sxm"), ScanKernel::linrec_forward,
                                            {int64_max, kMaxScanLength, 2, true, false}),
                         doctest::Contains("their product at most 2^60 - 1"), ShapeError);
}
