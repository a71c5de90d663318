// Device buffers for the GPU tests: upload host doubles in a storage type, download them back as
// doubles, and poison a buffer (every byte 0xFF: NaN in fp32, bf16 and fp16) so that an element a
// kernel fails to write shows up as NaN.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>

#include <cstdint>
#include <cstring>
#include <cmath>
#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "flashrnn/dtype.hpp"

namespace flashrnn::testing {

inline void cuda_ok(cudaError_t status, const char* what) {
    if (status != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(status));
}

// The value a double becomes when stored in `dtype` (round to nearest even).
inline double rounded_to(DType dtype, double value) {
    switch (dtype) {
    case DType::bf16:
        return static_cast<double>(__bfloat162float(__float2bfloat16_rn(static_cast<float>(value))));
    case DType::fp16:
        return static_cast<double>(__half2float(__float2half_rn(static_cast<float>(value))));
    case DType::fp32:
        break;
    }
    return static_cast<double>(static_cast<float>(value));
}

inline std::vector<double> rounded_to(DType dtype, std::vector<double> values) {
    for (double& v : values)
        v = rounded_to(dtype, v);
    return values;
}

class DeviceTensor {
  public:
    DeviceTensor(DType dtype, std::size_t count) : dtype_(dtype), count_(count) {
        cuda_ok(cudaMalloc(&data_, bytes() == 0 ? 1 : bytes()), "cudaMalloc");
        poison();
    }
    DeviceTensor(DType dtype, const std::vector<double>& values) : DeviceTensor(dtype, values.size()) {
        upload(values);
    }
    DeviceTensor(const DeviceTensor&) = delete;
    DeviceTensor& operator=(const DeviceTensor&) = delete;
    ~DeviceTensor() { cudaFree(data_); }

    void* data() const { return data_; }
    std::size_t count() const { return count_; }
    std::size_t bytes() const { return count_ * static_cast<std::size_t>(bytes_of(dtype_)); }

    void poison() { cuda_ok(cudaMemset(data_, 0xFF, bytes()), "cudaMemset"); }

    void upload(const std::vector<double>& values) {
        if (values.size() != count_) throw std::invalid_argument("upload: size mismatch");
        std::vector<unsigned char> host(bytes());
        for (std::size_t i = 0; i < count_; ++i) {
            const float f = static_cast<float>(values[i]);
            if (dtype_ == DType::fp32) {
                std::memcpy(&host[4 * i], &f, 4);
            } else if (dtype_ == DType::bf16) {
                const __nv_bfloat16 b = __float2bfloat16_rn(f);
                std::memcpy(&host[2 * i], &b, 2);
            } else {
                const __half h = __float2half_rn(f);
                std::memcpy(&host[2 * i], &h, 2);
            }
        }
        cuda_ok(cudaMemcpy(data_, host.data(), bytes(), cudaMemcpyHostToDevice), "cudaMemcpy to device");
    }

    std::vector<double> download() const {
        std::vector<unsigned char> host(bytes());
        cuda_ok(cudaMemcpy(host.data(), data_, bytes(), cudaMemcpyDeviceToHost), "cudaMemcpy to host");
        std::vector<double> values(count_);
        for (std::size_t i = 0; i < count_; ++i) {
            if (dtype_ == DType::fp32) {
                float f;
                std::memcpy(&f, &host[4 * i], 4);
                values[i] = f;
            } else if (dtype_ == DType::bf16) {
                __nv_bfloat16 b;
                std::memcpy(&b, &host[2 * i], 2);
                values[i] = __bfloat162float(b);
            } else {
                __half h;
                std::memcpy(&h, &host[2 * i], 2);
                values[i] = __half2float(h);
            }
        }
        return values;
    }

  private:
    DType dtype_;
    std::size_t count_;
    void* data_ = nullptr;
};

// |gpu - reference| <= abs_tol * max(1, max |reference|) + rel_tol * |reference| everywhere; NaN fails.
struct Tolerance {
    double abs_tol, rel_tol;
};

struct Comparison {
    bool ok = true;
    std::size_t worst_index = 0;
    double worst_excess = -1, gpu = 0, reference = 0;
    std::string describe(const std::string& tensor) const {
        return tensor + ": worst element " + std::to_string(worst_index) + " gpu " + std::to_string(gpu) +
               " reference " + std::to_string(reference);
    }
};

inline Comparison compare(const std::vector<double>& gpu, const std::vector<double>& reference, Tolerance tol) {
    Comparison result;
    double scale = 1.0;
    for (double r : reference)
        scale = std::max(scale, std::abs(r));
    for (std::size_t i = 0; i < gpu.size(); ++i) {
        const double bound = tol.abs_tol * scale + tol.rel_tol * std::abs(reference[i]);
        const double error = std::abs(gpu[i] - reference[i]);
        const double excess = std::isnan(gpu[i]) ? 1e300 : error - bound;
        if (excess > result.worst_excess) {
            result.worst_excess = excess;
            result.worst_index = i;
            result.gpu = gpu[i];
            result.reference = reference[i];
        }
    }
    result.ok = gpu.size() == reference.size() && result.worst_excess <= 0;
    return result;
}

} // namespace flashrnn::testing
