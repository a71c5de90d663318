#include "flashrnn/core/dtype.hpp"
#include "flashrnn/core/error.hpp"

#include <stdexcept>
#include <string>

namespace flashrnn {

std::string_view to_string(DType dtype) {
    switch (dtype) {
    case DType::fp32:
        return "fp32";
    case DType::bf16:
        return "bf16";
    case DType::fp16:
        return "fp16";
    }
    throw ShapeError("flashrnn: invalid DType value " + std::to_string(static_cast<int>(dtype)));
}

DType parse_dtype(std::string_view name) {
    for (DType dtype : {DType::fp32, DType::bf16, DType::fp16})
        if (to_string(dtype) == name) return dtype;
    throw UnsupportedError("flashrnn: unknown dtype '" + std::string(name) + "' (fp32, bf16 or fp16)");
}

int bytes_of(DType dtype) {
    return dtype == DType::fp32 ? 4 : 2;
}

} // namespace flashrnn
