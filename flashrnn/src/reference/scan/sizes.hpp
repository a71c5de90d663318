// Size checks of the scan references.
#pragma once

#include "flashrnn/core/error.hpp"
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace flashrnn::reference {

inline void check_size(const char* call, const char* tensor, std::size_t size, std::int64_t expected) {
    if (static_cast<std::int64_t>(size) != expected)
        throw ShapeError(std::string("flashrnn::") + call + ": " + tensor + " has " + std::to_string(size) +
                         " values, expected " + std::to_string(expected));
}

} // namespace flashrnn::reference
