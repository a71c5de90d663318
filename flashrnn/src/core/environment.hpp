// Integers the library reads from the environment (FLASHRNN_FUSED_*, FLASHRNN_REFERENCE_THREADS):
// one reader, so that every variable is refused the same way, naming itself and its range.
#pragma once

#include <cstdlib>
#include <string>

#include "flashrnn/core/error.hpp"

namespace flashrnn {

// The integer in `name`, from `least` to `most`, or `fallback` where it is unset or empty; anything
// else (a sign where none fits, white space, other characters) is refused with a ShapeError.
inline int environment_integer(const char* name, int fallback, int least, int most) {
    const char* text = std::getenv(name);
    if (!text || !*text) return fallback;
    char* end = nullptr;
    const long value = std::strtol(text, &end, 10);
    if (*end != '\0' || value < least || value > most)
        throw ShapeError(std::string(name) + "=" + text + ": expected an integer from " +
                         std::to_string(least) + " to " + std::to_string(most));
    return static_cast<int>(value);
}

} // namespace flashrnn
