// Helpers of the scan GPU tests: row-strided device tensors (on DeviceTensor, which moves and rounds
// the values) and their tensor views, exact and toleranced comparisons, random data whose partial results
// fp32 holds exactly.
#pragma once

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "device_tensor.hpp"
#include "flashrnn/core/dtype.hpp"
#include "flashrnn/core/tensor.hpp"

namespace flashrnn::scan_testing {

using flashrnn::DeviceTensor;
using flashrnn::rounded_to;
using flashrnn::testing::cuda_ok;

// What the gaps between rows hold: exact in every dtype, and neither an integer (the exact tests'
// results) nor the NaN of poisoned elements, so an element written into a gap shows.
inline constexpr double kGapValue = -0.3125;

// `rows` rows of `length` elements of a dtype on the device, `stride` elements apart (a view of a
// wider tensor when stride > length): the row tensor [rows, length] with strides {stride, 1}.
class DeviceRows {
  public:
    DeviceRows(DType dtype, std::int64_t rows, std::int64_t length, std::int64_t stride)
        : dtype_(dtype), tensor_(dtype, static_cast<std::size_t>(rows * stride)), rows_(rows),
          length_(length), stride_(stride) {}

    void* data() const { return tensor_.data(); }
    ConstTensorView in() const { return {tensor_.data(), dtype_, {rows_, length_}, {stride_, 1}}; }
    TensorView out() const { return {tensor_.data(), dtype_, {rows_, length_}, {stride_, 1}}; }

    // Every element and gap NaN, so an element the kernel fails to write shows.
    void poison() { tensor_.poison(); }

    // Dense values (rows x length) into the rows, rounded to the dtype; the gaps get kGapValue.
    void upload(const std::vector<double>& values) {
        REQUIRE(values.size() == static_cast<std::size_t>(rows_ * length_));
        std::vector<double> strided(tensor_.count(), kGapValue);
        for (std::int64_t r = 0; r < rows_; ++r)
            for (std::int64_t l = 0; l < length_; ++l)
                strided[index(r, l)] = values[static_cast<std::size_t>(r * length_ + l)];
        tensor_.upload(strided);
    }

    struct Download {
        std::vector<double> values; // dense, rows x length
        bool gaps_untouched;        // every gap still holds kGapValue (after an upload)
    };
    Download download() const {
        const std::vector<double> strided = tensor_.download();
        Download out{std::vector<double>(static_cast<std::size_t>(rows_ * length_)), true};
        const double gap = rounded_to(dtype_, kGapValue);
        for (std::int64_t r = 0; r < rows_; ++r) {
            for (std::int64_t l = 0; l < length_; ++l)
                out.values[static_cast<std::size_t>(r * length_ + l)] = strided[index(r, l)];
            for (std::int64_t l = length_; l < stride_; ++l)
                out.gaps_untouched = out.gaps_untouched && strided[index(r, l)] == gap;
        }
        return out;
    }

  private:
    std::size_t index(std::int64_t r, std::int64_t l) const {
        return static_cast<std::size_t>(r * stride_ + l);
    }

    DType dtype_;
    DeviceTensor tensor_;
    std::int64_t rows_, length_, stride_;
};

// fp32 values on the device (RG-LRU's Lambda and states).
class DeviceFloats : public DeviceTensor {
  public:
    explicit DeviceFloats(std::size_t count) : DeviceTensor(DType::fp32, count) {}
    float* data() const { return static_cast<float*>(DeviceTensor::data()); }
    // The dense fp32 vector [count].
    ConstTensorView in() const { return {data(), DType::fp32, {static_cast<std::int64_t>(count())}}; }
    TensorView out() const { return {data(), DType::fp32, {static_cast<std::int64_t>(count())}}; }
};

// Values in {-1, 0, 1} (or {-1, 1}): every partial result is an integer that fp32 holds exactly.
inline std::vector<double> random_signs(std::size_t count, bool with_zero, std::mt19937_64& rng) {
    std::uniform_int_distribution<int> pick(0, with_zero ? 2 : 1);
    std::vector<double> v(count);
    for (double& x : v) {
        const int k = pick(rng);
        x = k == 0 ? -1.0 : (k == 1 ? 1.0 : 0.0);
    }
    return v;
}

// Uniform in [lo, hi] with a random sign; never zero when lo > 0.
inline std::vector<double> random_magnitudes(std::size_t count, double lo, double hi, std::mt19937_64& rng) {
    std::uniform_real_distribution<double> mag(lo, hi);
    std::bernoulli_distribution sign(0.5);
    std::vector<double> v(count);
    for (double& x : v)
        x = sign(rng) ? mag(rng) : -mag(rng);
    return v;
}

// Identical, treating NaN as equal to NaN (overflow to infinity in fp16 is exact too). Returns the
// first mismatching index or -1.
inline std::int64_t first_difference(const std::vector<double>& got, const std::vector<double>& want) {
    for (std::size_t i = 0; i < want.size(); ++i) {
        const bool both_nan = std::isnan(got[i]) && std::isnan(want[i]);
        if (!both_nan && got[i] != want[i]) return static_cast<std::int64_t>(i);
    }
    return -1;
}

// The worst violation of |got - want| <= tolerance * (1 + |want|); NaN counts as a violation. (Per
// element, stricter than testing::compare, whose absolute part scales with the largest |want|.)
struct Mismatch {
    double excess = 0;
    std::int64_t index = -1;
    double got = 0, want = 0;
};
inline Mismatch worst_mismatch(const std::vector<double>& got, const std::vector<double>& want,
                               double tolerance) {
    Mismatch m;
    for (std::size_t i = 0; i < want.size(); ++i) {
        double excess = std::abs(got[i] - want[i]) - tolerance * (1 + std::abs(want[i]));
        if (std::isnan(got[i]) || std::isnan(excess)) excess = INFINITY;
        if (excess > m.excess) m = {excess, static_cast<std::int64_t>(i), got[i], want[i]};
    }
    return m;
}
inline std::string describe(const Mismatch& m) {
    return "element " + std::to_string(m.index) + ": got " + std::to_string(m.got) + ", want " +
           std::to_string(m.want);
}

// Stated tolerances per dtype, relative to (1 + |value|): fp32 arithmetic against float64, and one
// rounding of the output to bf16 (8 bits) or fp16 (11 bits) on top.
inline double tolerance_of(DType dtype) {
    switch (dtype) {
    case DType::bf16:
        return 1e-2;
    case DType::fp16:
        return 2e-3;
    case DType::fp32:
        break;
    }
    return 2e-5;
}

} // namespace flashrnn::scan_testing
