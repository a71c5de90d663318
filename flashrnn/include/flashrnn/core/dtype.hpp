// Element types of the GPU tensors. Every kernel computes in fp32 whatever the storage type.
#pragma once

#include <string_view>

namespace flashrnn {

enum class DType { fp32, bf16, fp16 };

// "fp32", "bf16", "fp16"; parse_dtype throws UnsupportedError naming the valid ones.
std::string_view to_string(DType dtype);
DType parse_dtype(std::string_view name);
int bytes_of(DType dtype);

} // namespace flashrnn
