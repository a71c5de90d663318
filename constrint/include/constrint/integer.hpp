// Exact integers of any size and the number theory the propagators need.
#pragma once

#include <boost/multiprecision/cpp_int.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace constrint {

// Every value, bound and coefficient in ConstrINT is an Integer: nothing overflows.
using Integer = boost::multiprecision::cpp_int;

// Floor and ceiling of a / b for b != 0 (rounding towards minus and plus infinity).
Integer floor_div(const Integer& a, const Integer& b);
Integer ceil_div(const Integer& a, const Integer& b);
// a - b * floor_div(a, b): the remainder with the sign of b.
Integer floor_mod(const Integer& a, const Integer& b);

Integer gcd(const Integer& a, const Integer& b);  // non-negative
Integer lcm(const Integer& a, const Integer& b);  // non-negative

// base^exponent for exponent >= 0.
Integer power(const Integer& base, unsigned exponent);

// Largest r >= 0 with r^k <= n, for n >= 0 and k >= 1.
Integer floor_root(const Integer& n, unsigned k);
// Smallest r >= 0 with r^k >= n, for n >= 0 and k >= 1.
Integer ceil_root(const Integer& n, unsigned k);

// The inverse of a modulo m (m >= 1, gcd(a, m) == 1), in [0, m).
Integer mod_inverse(const Integer& a, const Integer& m);

// The positive divisors of n != 0 in increasing order, or nothing when n cannot be factored
// quickly or has more than max_count divisors (callers then fall back to bounds reasoning).
std::optional<std::vector<Integer>> positive_divisors(const Integer& n, std::size_t max_count);

std::string to_string(const Integer& value);
// Parses an optionally signed decimal integer; nothing when the text is not one.
std::optional<Integer> parse_integer(std::string_view text);

}  // namespace constrint
