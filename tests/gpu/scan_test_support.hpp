// Helpers of the scan GPU tests: device buffers, host encoding of values in a dtype (round to nearest
// even, as the kernels' conversions), row-strided layouts, poisoned outputs and comparisons.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "flashrnn/dtype.hpp"
#include "flashrnn/scan.hpp"

namespace flashrnn::scan_testing {

inline void cuda_ok(cudaError_t status, const char* what) {
    if (status != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(status));
}

// Storage for `rows` rows of `row_stride` elements of a dtype on the device.
class DeviceRows {
  public:
    DeviceRows(DType dtype, std::int64_t rows, std::int64_t row_stride)
        : dtype_(dtype), rows_(rows), stride_(row_stride), bytes_(static_cast<std::size_t>(rows * row_stride) *
                                                                   static_cast<std::size_t>(bytes_of(dtype))) {
        cuda_ok(cudaMalloc(&data_, bytes_ == 0 ? 1 : bytes_), "cudaMalloc");
    }
    DeviceRows(const DeviceRows&) = delete;
    DeviceRows& operator=(const DeviceRows&) = delete;
    ~DeviceRows() { cudaFree(data_); }

    void* data() const { return data_; }
    std::int64_t stride() const { return stride_; }
    ConstRows in() const { return {data_, stride_}; }
    Rows out() const { return {data_, stride_}; }
    std::size_t bytes() const { return bytes_; }

    // Every byte 0xFF: NaN in fp32, bf16 and fp16, so an element the kernel fails to write shows.
    void poison() const { cuda_ok(cudaMemset(data_, 0xFF, bytes_), "cudaMemset"); }
    void upload(const std::vector<unsigned char>& host) const {
        REQUIRE(host.size() == bytes_);
        cuda_ok(cudaMemcpy(data_, host.data(), bytes_, cudaMemcpyHostToDevice), "cudaMemcpy H2D");
    }
    std::vector<unsigned char> download() const {
        std::vector<unsigned char> host(bytes_);
        cuda_ok(cudaMemcpy(host.data(), data_, bytes_, cudaMemcpyDeviceToHost), "cudaMemcpy D2H");
        return host;
    }

  private:
    DType dtype_;
    std::int64_t rows_, stride_;
    std::size_t bytes_;
    void* data_ = nullptr;
};

// A float on the device as an fp32 array.
class DeviceFloats {
  public:
    explicit DeviceFloats(std::size_t count) : count_(count) { cuda_ok(cudaMalloc(reinterpret_cast<void**>(&data_), count * 4 + 4), "cudaMalloc"); }
    DeviceFloats(const DeviceFloats&) = delete;
    DeviceFloats& operator=(const DeviceFloats&) = delete;
    ~DeviceFloats() { cudaFree(data_); }
    float* data() const { return data_; }
    void poison() const { cuda_ok(cudaMemset(data_, 0xFF, count_ * 4), "cudaMemset"); }
    void upload(const std::vector<double>& values) const {
        std::vector<float> f(values.begin(), values.end());
        REQUIRE(f.size() == count_);
        cuda_ok(cudaMemcpy(data_, f.data(), count_ * 4, cudaMemcpyHostToDevice), "cudaMemcpy H2D");
    }
    std::vector<double> download() const {
        std::vector<float> f(count_);
        cuda_ok(cudaMemcpy(f.data(), data_, count_ * 4, cudaMemcpyDeviceToHost), "cudaMemcpy D2H");
        return {f.begin(), f.end()};
    }

  private:
    std::size_t count_;
    float* data_ = nullptr;
};

// Round a double to the dtype (through float: the kernels compute in fp32) and back.
inline double round_to(DType dtype, double value) {
    const float f = static_cast<float>(value);
    switch (dtype) {
    case DType::bf16: return static_cast<double>(__bfloat162float(__float2bfloat16_rn(f)));
    case DType::fp16: return static_cast<double>(__half2float(__float2half_rn(f)));
    case DType::fp32: break;
    }
    return static_cast<double>(f);
}

inline std::vector<double> rounded(DType dtype, std::vector<double> values) {
    for (double& v : values) v = round_to(dtype, v);
    return values;
}

// Dense values (rows x length) into a row-strided buffer; the gaps hold `gap_byte`.
inline std::vector<unsigned char> encode(DType dtype, const std::vector<double>& values, std::int64_t length,
                                         std::int64_t stride, unsigned char gap_byte = 0x7B) {
    const auto rows = static_cast<std::int64_t>(values.size()) / length;
    const auto size = static_cast<std::size_t>(bytes_of(dtype));
    std::vector<unsigned char> out(static_cast<std::size_t>(rows * stride) * size, gap_byte);
    for (std::int64_t r = 0; r < rows; ++r)
        for (std::int64_t l = 0; l < length; ++l) {
            const auto f = static_cast<float>(values[static_cast<std::size_t>(r * length + l)]);
            unsigned char* target = out.data() + static_cast<std::size_t>(r * stride + l) * size;
            if (dtype == DType::fp32) {
                std::memcpy(target, &f, 4);
            } else if (dtype == DType::bf16) {
                const __nv_bfloat16 b = __float2bfloat16_rn(f);
                std::memcpy(target, &b, 2);
            } else {
                const __half h = __float2half_rn(f);
                std::memcpy(target, &h, 2);
            }
        }
    return out;
}

inline double decode_one(DType dtype, const unsigned char* source) {
    if (dtype == DType::fp32) {
        float f;
        std::memcpy(&f, source, 4);
        return f;
    }
    if (dtype == DType::bf16) {
        __nv_bfloat16 b;
        std::memcpy(&b, source, 2);
        return __bfloat162float(b);
    }
    __half h;
    std::memcpy(&h, source, 2);
    return __half2float(h);
}

inline std::vector<double> decode(DType dtype, const std::vector<unsigned char>& raw, std::int64_t length,
                                  std::int64_t stride) {
    const auto size = static_cast<std::size_t>(bytes_of(dtype));
    const auto rows = static_cast<std::int64_t>(raw.size() / size) / stride;
    std::vector<double> out(static_cast<std::size_t>(rows * length));
    for (std::int64_t r = 0; r < rows; ++r)
        for (std::int64_t l = 0; l < length; ++l)
            out[static_cast<std::size_t>(r * length + l)] =
                decode_one(dtype, raw.data() + static_cast<std::size_t>(r * stride + l) * size);
    return out;
}

// True when the bytes between rows (past each row's length) still hold `gap_byte`.
inline bool gaps_untouched(DType dtype, const std::vector<unsigned char>& raw, std::int64_t length, std::int64_t stride,
                           unsigned char gap_byte = 0x7B) {
    const auto size = static_cast<std::size_t>(bytes_of(dtype));
    const auto rows = static_cast<std::int64_t>(raw.size() / size) / stride;
    for (std::int64_t r = 0; r < rows; ++r)
        for (std::int64_t l = length; l < stride; ++l)
            for (std::size_t b = 0; b < size; ++b)
                if (raw[static_cast<std::size_t>(r * stride + l) * size + b] != gap_byte) return false;
    return true;
}

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
    for (double& x : v) x = sign(rng) ? mag(rng) : -mag(rng);
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

// The worst violation of |got - want| <= tolerance * (1 + |want|); NaN counts as a violation.
struct Mismatch {
    double excess = 0;
    std::int64_t index = -1;
    double got = 0, want = 0;
};
inline Mismatch worst_mismatch(const std::vector<double>& got, const std::vector<double>& want, double tolerance) {
    Mismatch m;
    for (std::size_t i = 0; i < want.size(); ++i) {
        double excess = std::abs(got[i] - want[i]) - tolerance * (1 + std::abs(want[i]));
        if (std::isnan(got[i]) || std::isnan(excess)) excess = INFINITY;
        if (excess > m.excess) m = {excess, static_cast<std::int64_t>(i), got[i], want[i]};
    }
    return m;
}
inline std::string describe(const Mismatch& m) {
    return "element " + std::to_string(m.index) + ": got " + std::to_string(m.got) + ", want " + std::to_string(m.want);
}

// Stated tolerances per dtype, relative to (1 + |value|): fp32 arithmetic against float64, and one
// rounding of the output to bf16 (8 bits) or fp16 (11 bits) on top.
inline double tolerance_of(DType dtype) {
    switch (dtype) {
    case DType::bf16: return 1e-2;
    case DType::fp16: return 2e-3;
    case DType::fp32: break;
    }
    return 2e-5;
}

} // namespace flashrnn::scan_testing
