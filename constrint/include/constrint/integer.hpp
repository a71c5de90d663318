// Exact integers of any size and the number theory the propagators need.
#pragma once

#include <boost/multiprecision/cpp_int.hpp>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace constrint {

// Every value, bound and coefficient in ConstrINT is an Integer: nothing overflows.
using Integer = boost::multiprecision::cpp_int;

// a < b: -1, a == b: 0, a > b: 1. Inline for values of one limb (below 2^64 in magnitude), which are
// almost all of them; boost's comparison is an out-of-line loop over the limbs, and the propagators'
// hot paths (domain bounds, membership) are mostly comparisons. always_inline: without it GCC kept
// this out of line too, where it still took 17% of golomb's profile.
int compare_any(const Integer& a, const Integer& b); // any size, out of line
[[gnu::always_inline]] inline int compare(const Integer& a, const Integer& b) {
    const auto& x = a.backend();
    const auto& y = b.backend();
    if (x.size() == 1 && y.size() == 1) {
        const auto mx = x.limbs()[0], my = y.limbs()[0];
        const bool negative_x = x.sign() && mx != 0, negative_y = y.sign() && my != 0;
        if (negative_x != negative_y) return negative_x ? -1 : 1;
        const int magnitude = mx < my ? -1 : mx > my ? 1 : 0;
        return negative_x ? -magnitude : magnitude;
    }
    return compare_any(a, b);
}

// Floor and ceiling of a / b for b != 0 (rounding towards minus and plus infinity).
Integer floor_div(const Integer& a, const Integer& b);
Integer ceil_div(const Integer& a, const Integer& b);
// a - b * floor_div(a, b): the remainder with the sign of b.
Integer floor_mod(const Integer& a, const Integer& b);

Integer gcd(const Integer& a, const Integer& b); // non-negative
Integer lcm(const Integer& a, const Integer& b); // non-negative

// base^exponent for exponent >= 0.
Integer power(const Integer& base, unsigned exponent);

// Largest r >= 0 with r^k <= n, for n >= 0 and k >= 1.
Integer floor_root(const Integer& n, unsigned k);
// Smallest r >= 0 with r^k >= n, for n >= 0 and k >= 1.
Integer ceil_root(const Integer& n, unsigned k);

// The inverse of a modulo m (m >= 1, gcd(a, m) == 1), in [0, m).
Integer mod_inverse(const Integer& a, const Integer& m);

// The largest part of a number, after its small prime factors, that positive_divisors tries to
// factor: beyond it a number counts as one that cannot be factored quickly.
constexpr std::uint64_t kMaxFactoredBits = 1024;
// The positive divisors of n != 0 in increasing order, or nothing when n cannot be factored
// quickly or has more than max_count divisors (callers then fall back to bounds reasoning), or when
// `stop` (asked every 128 Pollard-rho steps and every 256 primes of an elliptic-curve stage) says a limit of
// the caller was reached.
std::optional<std::vector<Integer>> positive_divisors(const Integer& n, std::size_t max_count,
                                                      const std::function<bool()>& stop = {});

std::string to_string(const Integer& value);
// Parses an optionally signed decimal integer; nothing when the text is not one.
std::optional<Integer> parse_integer(std::string_view text);
// The value of unsigned digits in `base` (2 to 16, letters in either case); nothing when a digit
// is not one. Subquadratic in the number of digits.
std::optional<Integer> parse_digits(std::string_view digits, unsigned base);

} // namespace constrint
