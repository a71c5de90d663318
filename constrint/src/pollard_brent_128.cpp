#include "pollard_brent_128.hpp"

#include <bit>
#include <random>
#include <utility>

namespace constrint::detail {

namespace {

__extension__ typedef unsigned __int128 Word; // __extension__: not ISO C++, but GCC and Clang have it

// The 256-bit product a * b as (high, low) words, from four 64 x 64-bit products (one instruction each).
std::pair<Word, Word> multiply_wide(Word a, Word b) {
    const auto a_lo = static_cast<std::uint64_t>(a), a_hi = static_cast<std::uint64_t>(a >> 64);
    const auto b_lo = static_cast<std::uint64_t>(b), b_hi = static_cast<std::uint64_t>(b >> 64);
    const Word lo_lo = static_cast<Word>(a_lo) * b_lo, lo_hi = static_cast<Word>(a_lo) * b_hi;
    const Word hi_lo = static_cast<Word>(a_hi) * b_lo, hi_hi = static_cast<Word>(a_hi) * b_hi;
    const Word middle = (lo_lo >> 64) + static_cast<std::uint64_t>(lo_hi) + static_cast<std::uint64_t>(hi_lo);
    const Word low = (middle << 64) | static_cast<std::uint64_t>(lo_lo);
    const Word high = hi_hi + (lo_hi >> 64) + (hi_lo >> 64) + (middle >> 64);
    return {high, low};
}

// Arithmetic modulo an odd n < 2^126 in Montgomery form (R = 2^128).
class Montgomery {
  public:
    explicit Montgomery(Word n) : n_(n), minus_inverse_(0) {
        Word inverse = n; // correct to 3 bits for odd n; each Newton step doubles them
        for (int i = 0; i < 6; ++i)
            inverse *= 2 - n * inverse;
        minus_inverse_ = -inverse;
    }
    // a * b / R mod n, for a, b < n.
    Word multiply(Word a, Word b) const {
        const auto [high, low] = multiply_wide(a, b);
        const Word m = low * minus_inverse_;
        const auto [m_high, m_low] = multiply_wide(m, n_);
        (void)m_low; // low + m_low is 0 mod R by the choice of m; it carries unless low is 0
        const Word t = high + m_high + (low != 0 ? 1 : 0);
        return t >= n_ ? t - n_ : t;
    }
    Word add(Word a, Word b) const {
        const Word t = a + b;
        return t >= n_ ? t - n_ : t;
    }

  private:
    Word n_, minus_inverse_;
};

int trailing_zeros(Word v) { // v != 0
    const auto low = static_cast<std::uint64_t>(v);
    return low != 0 ? std::countr_zero(low) : 64 + std::countr_zero(static_cast<std::uint64_t>(v >> 64));
}

// Binary gcd: a 128-bit division (a % b) is a slow library call, shifts and subtractions are not.
Word gcd(Word a, Word b) {
    if (a == 0 || b == 0) return a | b;
    const int shift = trailing_zeros(a | b);
    a >>= trailing_zeros(a);
    do {
        b >>= trailing_zeros(b);
        if (a > b) std::swap(a, b);
        b -= a;
    } while (b != 0);
    return a << shift;
}

Word to_word(const Integer& v) {
    return (static_cast<Word>(static_cast<std::uint64_t>(v >> 64)) << 64) |
           static_cast<std::uint64_t>(v & ~std::uint64_t{0});
}

Integer to_integer(Word v) {
    return (Integer(static_cast<std::uint64_t>(v >> 64)) << 64) | Integer(static_cast<std::uint64_t>(v));
}

} // namespace

std::optional<Integer> pollard_brent_128(const Integer& number, std::uint64_t& budget,
                                         const std::function<bool()>& stop) {
    const Word n = to_word(number);
    const Montgomery mont(n);
    std::mt19937_64 rng(0x5eed);
    const std::uint64_t block = 128;
    for (int attempt = 0; attempt < 8 && budget > 0; ++attempt) {
        // Any polynomial y^2 + c works for rho; in Montgomery form it is y^2 / R + c.
        const Word c = (1 + rng() % 1000) % n;
        Word y = (2 + rng() % 1000) % n, x = 0, ys = 0, q = 1, g = 1;
        const auto step = [&](Word v) { return mont.add(mont.multiply(v, v), c); };
        for (std::uint64_t r = 1; g == 1 && budget > 0; r *= 2) {
            x = y;
            for (std::uint64_t i = 0; i < r; ++i)
                y = step(y);
            for (std::uint64_t k = 0; k < r && g == 1; k += block) {
                ys = y;
                for (std::uint64_t i = 0; i < std::min(block, r - k); ++i) {
                    y = step(y);
                    q = mont.multiply(q, x > y ? x - y : y - x);
                }
                g = gcd(q, n);
                budget = budget > block ? budget - block : 0;
                if (stop && stop()) budget = 0;
            }
        }
        if (g == n) { // the batch overshot: step one at a time from the saved point
            do {
                ys = step(ys);
                g = gcd(x > ys ? x - ys : ys - x, n);
                budget = budget > 0 ? budget - 1 : 0;
            } while (g == 1 && budget > 0);
        }
        if (g != n && g != 1) return to_integer(g);
    }
    return std::nullopt;
}

} // namespace constrint::detail
