#include "constrint/integer.hpp"

#include "ecm.hpp"
#include "machine_word.hpp"
#include "pollard_brent_128.hpp"

#include <boost/multiprecision/miller_rabin.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <map>
#include <random>

namespace constrint {

int compare_any(const Integer& a, const Integer& b) {
    return a.compare(b);
}

// Both in machine words where the operands fit (machine_word.hpp). Measured: boost's division (two
// per call, quotient and remainder) was about a fifth of the fused tiling model's search (perf,
// `flashrnn tune --backend fused`).
Integer floor_div(const Integer& a, const Integer& b) {
    Word x = 0, y = 0, q = 0;
    if (read_word(a, x) && read_word(b, y) && floor_div_word(x, y, q)) return q;
    Integer quotient = a / b; // truncates towards zero
    if ((a % b != 0) && ((a < 0) != (b < 0))) --quotient;
    return quotient;
}

Integer ceil_div(const Integer& a, const Integer& b) {
    Word x = 0, y = 0, q = 0;
    if (read_word(a, x) && read_word(b, y) && ceil_div_word(x, y, q)) return q;
    Integer quotient = a / b;
    if ((a % b != 0) && ((a < 0) == (b < 0))) ++quotient;
    return quotient;
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

namespace {

// A start for Newton's iteration towards floor(n^(1/k)) that is at least the root and within about
// 2^-30 of it: 2^(log2(n) / k) from n's leading 64 bits, raised by a margin above the doubles' error
// (about bits x 2^-52 / k, relative).
// The power of two above the root, the textbook start, can be almost twice the root, and from there
// each step shrinks it by only (k - 1) / k: the 655th root of a 40,611-bit bound took 454 steps of
// 40,000-bit powers and divisions (30 ms in release, a second under AddressSanitizer).
Integer root_start_above(const Integer& n, unsigned k, std::size_t bits) {
    const std::size_t shift = bits > 64 ? bits - 64 : 0;
    const double log2_n = std::log2((n >> shift).convert_to<double>()) + static_cast<double>(shift);
    const double log2_root = log2_n / k;
    const double margin = 1.0 + 0x1p-30;
    Integer x;
    if (log2_root < 52) {
        x = Integer(static_cast<std::uint64_t>(std::ceil(std::exp2(log2_root) * margin))) + 1;
    } else {
        const auto exponent = static_cast<unsigned>(std::floor(log2_root)) - 52;
        x = (Integer(static_cast<std::uint64_t>(std::ceil(std::exp2(log2_root - exponent) * margin))) + 1)
            << exponent;
    }
    while (power(x, k) <= n)
        x += (x >> 16) + 1; // only for n beyond 2^(2^20) bits: the start must be above
    return x;
}

} // namespace

Integer floor_root(const Integer& n, unsigned k) {
    if (k == 1 || n < 2) return n;
    const std::size_t bits = boost::multiprecision::msb(n) + 1;
    if (k >= bits) return 1; // n < 2^bits <= 2^k
    // Newton's iteration from above converges monotonically to the floor of the root, quadratically
    // once near it.
    Integer x = root_start_above(n, k, bits);
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

// ECM's work budget per factored number, in 64 x 64-bit word products: about 2.7 s of CPU for numbers
// up to 128 bits and 1.5 s beyond (measured per curve on the project's build machine). It covers
// the first two levels of curves whole (factors up to about 2^66) at every size up to 256 bits.
constexpr std::uint64_t kEcmWork = std::uint64_t{1} << 30;

// Pollard-Brent rho: a non-trivial factor of the odd composite n, or nothing within the budget. A
// `stop` that says yes (asked once per block of steps) ends the budget.
std::optional<Integer> pollard_brent(const Integer& n, std::uint64_t& budget,
                                     const std::function<bool()>& stop) {
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
                if (stop && stop()) budget = 0;
            }
        }
        if (g == n) { // the batch overshot: step one at a time from the saved point
            do {
                ys = (ys * ys + c) % n;
                g = gcd(x > ys ? Integer(x - ys) : Integer(ys - x), n);
                budget = budget > 0 ? budget - 1 : 0;
            } while (g == 1 && budget > 0);
        }
        if (g != n && g != 1) return g;
    }
    return std::nullopt;
}

// What factoring may still spend: Pollard-Brent steps, then ECM work (detail::ecm_factor's units);
// nothing once the caller's stop check said yes.
struct FactoringBudget {
    std::uint64_t rho_steps;
    std::uint64_t ecm_work;
    bool stopped = false;
};

// Rho first: it finds the factors below about 2^40 sooner than ECM's first curves; ECM finds the
// larger ones in time that grows with the factor, where rho needs about sqrt(factor) steps.
bool factor_into(const Integer& n, std::map<Integer, unsigned>& factors, FactoringBudget& budget,
                 const std::function<bool()>& stop) {
    if (n == 1) return true;
    if (boost::multiprecision::miller_rabin_test(n, 25)) {
        ++factors[n];
        return true;
    }
    auto d = boost::multiprecision::msb(n) < detail::kMachineFactoredBits
                 ? detail::pollard_brent_128(n, budget.rho_steps, stop)
                 : pollard_brent(n, budget.rho_steps, stop);
    if (!d && !budget.stopped) d = detail::ecm_factor(n, budget.ecm_work, stop);
    if (!d) return false;
    return factor_into(*d, factors, budget, stop) && factor_into(n / *d, factors, budget, stop);
}

} // namespace

std::optional<std::vector<Integer>> positive_divisors(const Integer& n, std::size_t max_count,
                                                      const std::function<bool()>& stop) {
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
    if (m > 1) {
        // What is left after trial division: a primality test, Pollard-Brent rho, then ECM. Rho
        // needs about sqrt(factor) steps; below 2^126 a step runs on machine words (~18 ns against
        // ~240 ns with cpp_int), so 2^20 steps (~20 ms) find the factors up to about 2^40, and
        // ECM's first curves take the larger ones sooner than more rho steps would (a 50-bit
        // factor: 25 curves of ~1 ms). Longer numbers get fewer rho steps, as a step costs about
        // the square of the size in words; past kMaxFactoredBits even a primality test is slow.
        const std::uint64_t bits = boost::multiprecision::msb(m) + 1;
        if (bits > kMaxFactoredBits) return std::nullopt;
        const std::uint64_t words = bits / 64 + 1;
        FactoringBudget budget{
            bits <= detail::kMachineFactoredBits
                ? std::uint64_t{1} << 20
                : std::min<std::uint64_t>(1u << 16, (std::uint64_t{1} << 18) / (words * words)),
            kEcmWork};
        // The caller's check, asked no more once it said yes.
        const std::function<bool()> stop_once = [&] {
            return budget.stopped = budget.stopped || (stop && stop());
        };
        if (!factor_into(m, factors, budget, stop_once)) return std::nullopt;
    }

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

namespace {

// The value of `digits` (all valid in `base`) by halves: high * base^(length of low) + low, so that
// the big multiplications are few and balanced (Karatsuba in Boost) instead of one per digit, which
// made a million-digit literal cost half a minute. `powers` caches base^n by n.
Integer digits_value(std::string_view digits, unsigned base, std::map<std::size_t, Integer>& powers) {
    if (digits.size() <= 16) { // 16^16 and 10^16 fit in 64 bits
        std::uint64_t v = 0;
        for (char c : digits) {
            const int lower = std::tolower(static_cast<unsigned char>(c));
            v = v * base + static_cast<unsigned>(lower >= 'a' ? lower - 'a' + 10 : lower - '0');
        }
        return Integer(v);
    }
    const std::size_t low_size = digits.size() / 2;
    auto [it, inserted] = powers.try_emplace(low_size);
    if (inserted) it->second = power(Integer(base), static_cast<unsigned>(low_size));
    const Integer& scale = it->second;
    return digits_value(digits.substr(0, digits.size() - low_size), base, powers) * scale +
           digits_value(digits.substr(digits.size() - low_size), base, powers);
}

} // namespace

std::optional<Integer> parse_integer(std::string_view text) {
    std::size_t i = 0;
    bool negative = false;
    if (i < text.size() && (text[i] == '-' || text[i] == '+')) negative = text[i++] == '-';
    const std::optional<Integer> value = parse_digits(text.substr(i), 10);
    if (!value) return std::nullopt;
    return negative ? Integer(-*value) : *value;
}

std::optional<Integer> parse_digits(std::string_view digits, unsigned base) {
    if (digits.empty() || base < 2 || base > 16) return std::nullopt;
    for (char c : digits) {
        const int lower = std::tolower(static_cast<unsigned char>(c));
        const int d = std::isdigit(lower)            ? lower - '0'
                      : lower >= 'a' && lower <= 'f' ? lower - 'a' + 10
                                                     : 99;
        if (d >= static_cast<int>(base)) return std::nullopt;
    }
    std::map<std::size_t, Integer> powers;
    return digits_value(digits, base, powers);
}

} // namespace constrint
