#include "constrint/integer.hpp"

#include <boost/multiprecision/miller_rabin.hpp>

#include <algorithm>
#include <map>
#include <random>

namespace constrint {

int compare_any(const Integer& a, const Integer& b) {
    return a.compare(b);
}

Integer floor_div(const Integer& a, const Integer& b) {
    Integer q = a / b; // truncates towards zero
    if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
    return q;
}

Integer ceil_div(const Integer& a, const Integer& b) {
    Integer q = a / b;
    if ((a % b != 0) && ((a < 0) == (b < 0))) ++q;
    return q;
}

Integer floor_mod(const Integer& a, const Integer& b) {
    return a - b * floor_div(a, b);
}

Integer gcd(const Integer& a, const Integer& b) {
    Integer g = boost::multiprecision::gcd(a, b);
    return g < 0 ? Integer(-g) : g;
}

Integer lcm(const Integer& a, const Integer& b) {
    if (a == 0 || b == 0) return 0;
    Integer l = a / gcd(a, b) * b;
    return l < 0 ? Integer(-l) : l;
}

Integer power(const Integer& base, unsigned exponent) {
    return boost::multiprecision::pow(base, exponent);
}

Integer floor_root(const Integer& n, unsigned k) {
    if (k == 1 || n < 2) return n;
    // Newton's iteration from above converges monotonically to the floor of the root.
    const std::size_t bits = boost::multiprecision::msb(n) + 1;
    Integer x = Integer(1) << ((bits + k - 1) / k);
    for (;;) {
        Integer y = ((k - 1) * x + n / power(x, k - 1)) / k;
        if (y >= x) return x;
        x = y;
    }
}

Integer ceil_root(const Integer& n, unsigned k) {
    Integer r = floor_root(n, k);
    return power(r, k) == n ? r : Integer(r + 1);
}

Integer mod_inverse(const Integer& a, const Integer& m) {
    Integer old_r = floor_mod(a, m), r = m, old_s = 1, s = 0;
    while (r != 0) {
        Integer q = old_r / r;
        Integer t = old_r - q * r;
        old_r = r;
        r = t;
        t = old_s - q * s;
        old_s = s;
        s = t;
    }
    return floor_mod(old_s, m);
}

namespace {

// Pollard-Brent rho: a non-trivial factor of the odd composite n, or nothing within the budget.
std::optional<Integer> pollard_brent(const Integer& n, std::uint64_t& budget) {
    std::mt19937_64 rng(0x5eed);
    for (int attempt = 0; attempt < 8 && budget > 0; ++attempt) {
        const Integer c = 1 + Integer(rng() % 1000);
        Integer y = 2 + Integer(rng() % 1000), x, ys, q = 1, g = 1;
        const std::uint64_t block = 128;
        for (std::uint64_t r = 1; g == 1 && budget > 0; r *= 2) {
            x = y;
            for (std::uint64_t i = 0; i < r; ++i)
                y = (y * y + c) % n;
            for (std::uint64_t k = 0; k < r && g == 1; k += block) {
                ys = y;
                for (std::uint64_t i = 0; i < std::min(block, r - k); ++i) {
                    y = (y * y + c) % n;
                    q = q * (x > y ? Integer(x - y) : Integer(y - x)) % n;
                }
                g = gcd(q, n);
                budget = budget > block ? budget - block : 0;
            }
        }
        if (g == n) { // the batch overshot: step one at a time from the saved point
            do {
                ys = (ys * ys + c) % n;
                g = gcd(x > ys ? Integer(x - ys) : Integer(ys - x), n);
            } while (g == 1);
        }
        if (g != n && g != 1) return g;
    }
    return std::nullopt;
}

bool factor_into(const Integer& n, std::map<Integer, unsigned>& factors, std::uint64_t& budget) {
    if (n == 1) return true;
    if (boost::multiprecision::miller_rabin_test(n, 25)) {
        ++factors[n];
        return true;
    }
    auto d = pollard_brent(n, budget);
    if (!d) return false;
    return factor_into(*d, factors, budget) && factor_into(n / *d, factors, budget);
}

} // namespace

std::optional<std::vector<Integer>> positive_divisors(const Integer& n, std::size_t max_count) {
    Integer m = n < 0 ? Integer(-n) : n;
    if (m == 0) return std::nullopt;
    std::map<Integer, unsigned> factors;
    for (unsigned p : {2u, 3u, 5u}) {
        while (m % p == 0) {
            ++factors[p];
            m /= p;
        }
    }
    // Trial division by 6k +- 1 catches the small primes hardware sizes are made of.
    for (unsigned p = 7; p < 4096 && Integer(p) * p <= m; p += 2) {
        if (p % 3 == 0 || p % 5 == 0) continue;
        while (m % p == 0) {
            ++factors[p];
            m /= p;
        }
    }
    std::uint64_t budget = 1u << 20;
    if (m > 1 && !factor_into(m, factors, budget)) return std::nullopt;

    std::size_t count = 1;
    for (const auto& [prime, exponent] : factors) {
        count *= exponent + 1;
        if (count > max_count) return std::nullopt;
    }
    if (count > max_count) return std::nullopt;
    std::vector<Integer> divisors{1};
    divisors.reserve(count);
    for (const auto& [prime, exponent] : factors) {
        const std::size_t previous = divisors.size();
        Integer factor = 1;
        for (unsigned e = 1; e <= exponent; ++e) {
            factor *= prime;
            for (std::size_t i = 0; i < previous; ++i)
                divisors.push_back(divisors[i] * factor);
        }
    }
    std::sort(divisors.begin(), divisors.end());
    return divisors;
}

std::string to_string(const Integer& value) {
    return value.str();
}

std::optional<Integer> parse_integer(std::string_view text) {
    std::size_t i = 0;
    bool negative = false;
    if (i < text.size() && (text[i] == '-' || text[i] == '+')) negative = text[i++] == '-';
    if (i == text.size()) return std::nullopt;
    Integer value = 0;
    for (; i < text.size(); ++i) {
        if (text[i] < '0' || text[i] > '9') return std::nullopt;
        value = value * 10 + (text[i] - '0');
    }
    return negative ? Integer(-value) : value;
}

} // namespace constrint
