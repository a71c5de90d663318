// Machine-word arithmetic for the propagators' fast paths. Values that fit 64 bits are read out of
// their Integer and computed on with overflow checks; every operation answers false when its result
// would not fit, and the caller then takes its Integer path: nothing overflows silently.
#pragma once

#include "constrint/integer.hpp"

#include <cstdint>
#include <limits>

namespace constrint {

using Word = std::int64_t;

// v as a Word when -2^63 <= v <= 2^63 - 1, read from its limbs (cheaper than comparing cpp_ints).
[[gnu::always_inline]] inline bool read_word(const Integer& v, Word& out) {
    const auto& backend = v.backend();
    if (backend.size() != 1) return false;
    const std::uint64_t magnitude = backend.limbs()[0];
    constexpr std::uint64_t kLargest = std::numeric_limits<Word>::max();
    if (!backend.sign() || magnitude == 0) {
        if (magnitude > kLargest) return false;
        out = static_cast<Word>(magnitude);
        return true;
    }
    if (magnitude > kLargest + 1) return false;
    out = static_cast<Word>(0 - magnitude); // two's complement (C++20): -2^63 included
    return true;
}

// target = w, writing the limb in place when target holds one limb already (the domains' word paths:
// an Integer assigned a word calls the out-of-line resize of its limb buffer, which showed in golomb).
[[gnu::always_inline]] inline void write_word(Integer& target, Word w) {
    auto& backend = target.backend();
    if (backend.size() != 1) {
        target = w;
        return;
    }
    backend.limbs()[0] = w < 0 ? 0 - static_cast<std::uint64_t>(w) : static_cast<std::uint64_t>(w);
    if (backend.sign() != (w < 0)) backend.negate(); // negate() keeps zero non-negative
}

[[gnu::always_inline]] inline bool add_word(Word a, Word b, Word& out) {
    return !__builtin_add_overflow(a, b, &out);
}
[[gnu::always_inline]] inline bool subtract_word(Word a, Word b, Word& out) {
    return !__builtin_sub_overflow(a, b, &out);
}
[[gnu::always_inline]] inline bool multiply_word(Word a, Word b, Word& out) {
    return !__builtin_mul_overflow(a, b, &out);
}

// Floor and ceiling of a / b for b != 0; false only for -2^63 / -1 (2^63 does not fit).
inline bool floor_div_word(Word a, Word b, Word& out) {
    if (b == -1 && a == std::numeric_limits<Word>::min()) return false;
    const Word q = a / b;
    out = (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
    return true;
}
inline bool ceil_div_word(Word a, Word b, Word& out) {
    if (b == -1 && a == std::numeric_limits<Word>::min()) return false;
    const Word q = a / b;
    out = (a % b != 0 && ((a < 0) == (b < 0))) ? q + 1 : q;
    return true;
}

} // namespace constrint
