// An owning device buffer for tools and tests: host doubles uploaded in a storage type (fp32, bf16,
// fp16; rounded to nearest even) and downloaded back as doubles, poisoned at creation (every byte
// 0xFF: NaN in all three types) so that an element no kernel wrote shows up. Needs the CUDA runtime
// headers: include it only where FLASHRNN_WITH_CUDA is set.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "flashrnn/core/dtype.hpp"
#include "flashrnn/core/tensor.hpp"

namespace flashrnn {

inline void device_tensor_check(cudaError_t status, const char* what) {
    if (status != cudaSuccess)
        throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(status));
}

// One element in its storage bytes (bytes_of(dtype) of them), rounded to nearest even, and back.
inline void encode(DType dtype, double value, unsigned char* bytes) {
    const float f = static_cast<float>(value);
    if (dtype == DType::bf16) {
        const __nv_bfloat16 b = __float2bfloat16_rn(f);
        std::memcpy(bytes, &b, 2);
    } else if (dtype == DType::fp16) {
        const __half h = __float2half_rn(f);
        std::memcpy(bytes, &h, 2);
    } else {
        std::memcpy(bytes, &f, 4);
    }
}

inline double decode(DType dtype, const unsigned char* bytes) {
    if (dtype == DType::bf16) {
        __nv_bfloat16 b;
        std::memcpy(&b, bytes, 2);
        return __bfloat162float(b);
    }
    if (dtype == DType::fp16) {
        __half h;
        std::memcpy(&h, bytes, 2);
        return __half2float(h);
    }
    float f;
    std::memcpy(&f, bytes, 4);
    return f;
}

// The value a double becomes when stored in `dtype`.
inline double rounded_to(DType dtype, double value) {
    unsigned char bytes[4];
    encode(dtype, value, bytes);
    return decode(dtype, bytes);
}

inline std::vector<double> rounded_to(DType dtype, std::vector<double> values) {
    for (double& v : values)
        v = rounded_to(dtype, v);
    return values;
}

class DeviceTensor {
  public:
    DeviceTensor(DType dtype, std::size_t count) : dtype_(dtype), count_(count) {
        device_tensor_check(cudaMalloc(&data_, bytes() == 0 ? 1 : bytes()), "cudaMalloc");
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

    // The tensor with these sizes, as an argument of a kernel family (throws when the sizes do not
    // hold exactly this tensor's elements).
    TensorView view(const Extents& sizes) const {
        if (sizes.product() != static_cast<std::int64_t>(count_))
            throw std::invalid_argument("DeviceTensor::view: sizes " + to_string(sizes) + " for " +
                                        std::to_string(count_) + " elements");
        return {data_, dtype_, sizes};
    }
    // As a workspace of bytes() bytes.
    Workspace workspace() const { return {data_, bytes()}; }

    void poison() { device_tensor_check(cudaMemset(data_, 0xFF, bytes()), "cudaMemset"); }

    void upload(const std::vector<double>& values) {
        if (values.size() != count_) throw std::invalid_argument("upload: size mismatch");
        const std::size_t width = static_cast<std::size_t>(bytes_of(dtype_));
        std::vector<unsigned char> host(bytes());
        for (std::size_t i = 0; i < count_; ++i)
            encode(dtype_, values[i], &host[width * i]);
        device_tensor_check(cudaMemcpy(data_, host.data(), bytes(), cudaMemcpyHostToDevice),
                            "cudaMemcpy to device");
    }

    std::vector<double> download() const {
        const std::size_t width = static_cast<std::size_t>(bytes_of(dtype_));
        std::vector<unsigned char> host(bytes());
        device_tensor_check(cudaMemcpy(host.data(), data_, bytes(), cudaMemcpyDeviceToHost),
                            "cudaMemcpy to host");
        std::vector<double> values(count_);
        for (std::size_t i = 0; i < count_; ++i)
            values[i] = decode(dtype_, &host[width * i]);
        return values;
    }

  private:
    DType dtype_;
    std::size_t count_;
    void* data_ = nullptr;
};

} // namespace flashrnn
