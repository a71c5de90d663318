// The number theory under the propagators, checked against brute-force definitions on small
// numbers and against the defining inequalities on numbers far beyond 64 bits.
#include "ecm.hpp"
#include "montgomery_limbs.hpp"

#include <constrint/integer.hpp>
#include <doctest/doctest.h>

#include <boost/multiprecision/miller_rabin.hpp>

#include <algorithm>
#include <optional>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

using constrint::Integer;

namespace {

Integer two_to(unsigned k) {
    return Integer(1) << k;
}

// floor(a / b) by its definition: the largest q with q * b <= a (b > 0) or q * b >= a (b < 0).
long long brute_floor_div(long long a, long long b) {
    long long best = -1000;
    for (long long q = -1000; q <= 1000; ++q) {
        if (b > 0 ? q * b <= a : q * b >= a) best = q;
    }
    return best;
}

// ceil(a / b): the smallest q with q * b >= a (b > 0) or q * b <= a (b < 0).
long long brute_ceil_div(long long a, long long b) {
    for (long long q = -1000; q <= 1000; ++q) {
        if (b > 0 ? q * b >= a : q * b <= a) return q;
    }
    return 1001;
}

long long brute_gcd(long long a, long long b) {
    if (a == 0 && b == 0) return 0;
    long long best = 1;
    for (long long d = 1; d <= 60; ++d) {
        if (a % d == 0 && b % d == 0) best = d;
    }
    return best;
}

// The largest r >= 0 with r^k <= n, by counting up.
long long brute_floor_root(long long n, unsigned k) {
    auto pow_le = [&](long long r) { // r^k <= n without overflow for the small n used here
        long long p = 1;
        for (unsigned i = 0; i < k; ++i) {
            p *= r;
            if (p > n) return false;
        }
        return true;
    };
    long long r = 0;
    while (pow_le(r + 1))
        ++r;
    return r;
}

std::vector<Integer> brute_divisors(long long n) {
    const long long m = n < 0 ? -n : n;
    std::vector<Integer> out;
    for (long long d = 1; d <= m; ++d) {
        if (m % d == 0) out.emplace_back(d);
    }
    return out;
}

Integer next_prime(Integer n) {
    while (!boost::multiprecision::miller_rabin_test(n, 30))
        ++n;
    return n;
}

} // namespace

TEST_CASE("integer: floor_div, ceil_div and floor_mod on every sign combination of [-20, 20]") {
    int checked = 0;
    for (long long a = -20; a <= 20; ++a) {
        for (long long b = -20; b <= 20; ++b) {
            if (b == 0) continue;
            CAPTURE(a);
            CAPTURE(b);
            const Integer q = constrint::floor_div(a, b);
            const Integer c = constrint::ceil_div(a, b);
            const Integer r = constrint::floor_mod(a, b);
            CHECK(q == brute_floor_div(a, b));
            CHECK(c == brute_ceil_div(a, b));
            CHECK(r == a - b * brute_floor_div(a, b));
            // The remainder has the sign of the divisor (or is 0) and is smaller in magnitude.
            CHECK((b > 0 ? (r >= 0 && r < b) : (r <= 0 && r > b)));
            ++checked;
        }
    }
    CHECK(checked == 41 * 40);
}

TEST_CASE("integer: floor_div and ceil_div across 2^63 and 2^64 (machine division and boost's)") {
    // Values in [-2^63, 2^63) take the machine's division (but -2^63 / -1), the others boost's: every
    // pair of a grid around both boundaries, each sign, against the definitions in exact arithmetic.
    const Integer two63 = Integer(1) << 63, two64 = Integer(1) << 64;
    std::vector<Integer> magnitudes;
    for (const Integer& edge : {two63, two64, Integer(1) << 127})
        for (int d = -2; d <= 2; ++d)
            magnitudes.push_back(edge + d);
    for (long long small : {1, 2, 3, 7, 1000000007})
        magnitudes.push_back(small);
    magnitudes.push_back(0);
    std::vector<Integer> values;
    for (const Integer& m : magnitudes) {
        values.push_back(m);
        values.push_back(-m);
    }
    int checked = 0;
    for (const Integer& a : values)
        for (const Integer& b : values) {
            if (b == 0) continue;
            CAPTURE(a);
            CAPTURE(b);
            const Integer q = constrint::floor_div(a, b), c = constrint::ceil_div(a, b);
            const Integer below = a - q * b,
                          above = a - c * b; // floor's remainder has b's sign, ceil's the other
            const Integer size = b < 0 ? Integer(-b) : b;
            CHECK((below == 0 || ((below < 0) == (b < 0))));
            CHECK((above == 0 || ((above < 0) != (b < 0))));
            CHECK((below < 0 ? Integer(-below) : below) < size);
            CHECK((above < 0 ? Integer(-above) : above) < size);
            CHECK(c - q == (below == 0 ? 0 : 1));
            ++checked;
        }
    CHECK(checked == static_cast<int>(values.size() * (values.size() - 2)));
}

TEST_CASE("integer: floor_div, ceil_div and floor_mod beyond 2^64 satisfy their defining inequalities") {
    const Integer big = two_to(100) + 12345;
    const std::vector<Integer> numerators{
        big * big + 7,  -(big * big + 7), big,        -big,        two_to(64), -two_to(64),
        two_to(64) - 1, Integer(0),       Integer(1), Integer(-1), big * 3,    -big * 3};
    const std::vector<Integer> divisors{big,         -big,           Integer(3), Integer(-3), two_to(64),
                                        -two_to(64), two_to(65) + 1, Integer(1), Integer(-1)};
    for (const Integer& a : numerators) {
        for (const Integer& b : divisors) {
            CAPTURE(a);
            CAPTURE(b);
            const Integer q = constrint::floor_div(a, b);
            const Integer c = constrint::ceil_div(a, b);
            const Integer r = constrint::floor_mod(a, b);
            if (b > 0) {
                CHECK(q * b <= a);
                CHECK((q + 1) * b > a);
                CHECK(c * b >= a);
                CHECK((c - 1) * b < a);
                CHECK(r >= 0);
                CHECK(r < b);
            } else {
                CHECK(q * b >= a);
                CHECK((q + 1) * b < a);
                CHECK(c * b <= a);
                CHECK((c - 1) * b > a);
                CHECK(r <= 0);
                CHECK(r > b);
            }
            CHECK(a == q * b + r);
            CHECK(c - q == (r == 0 ? 0 : 1));
        }
    }
    CHECK(constrint::floor_div(big * big, big) == big);
    CHECK(constrint::floor_div(-(big * big) - 1, big) == -big - 1);
    CHECK(constrint::ceil_div(big * big + 1, big) == big + 1);
}

TEST_CASE("integer: gcd and lcm are non-negative and match brute force") {
    for (long long a = -30; a <= 30; ++a) {
        for (long long b = -30; b <= 30; ++b) {
            CAPTURE(a);
            CAPTURE(b);
            const long long g = brute_gcd(a, b);
            CHECK(constrint::gcd(a, b) == g);
            const long long l = (a == 0 || b == 0) ? 0 : (a < 0 ? -a : a) / g * (b < 0 ? -b : b);
            CHECK(constrint::lcm(a, b) == l);
        }
    }
    const Integer p = two_to(89) - 1; // a Mersenne prime
    const Integer q = two_to(61) - 1; // another
    CHECK(constrint::gcd(p * q * 6, -p * 10) == p * 2);
    CHECK(constrint::gcd(-p * q, -q) == q);
    CHECK(constrint::lcm(-p * 4, q * 6) == p * q * 12);
    CHECK(constrint::lcm(p, p) == p);
}

TEST_CASE("integer: floor_root and ceil_root are exact for k = 1..7 on small n") {
    for (unsigned k = 1; k <= 7; ++k) {
        for (long long n = 0; n <= 3000; ++n) {
            CAPTURE(k);
            CAPTURE(n);
            const long long r = brute_floor_root(n, k);
            CHECK(constrint::floor_root(n, k) == r);
            const bool exact = constrint::power(r, k) == n;
            CHECK(constrint::ceil_root(n, k) == (exact ? r : r + 1));
        }
    }
    // Every perfect power up to 2^20 is its own ceiling and floor.
    for (unsigned k = 2; k <= 7; ++k) {
        for (long long r = 0; constrint::power(r, k) <= (1 << 20); ++r) {
            const Integer n = constrint::power(r, k);
            CHECK(constrint::floor_root(n, k) == r);
            CHECK(constrint::ceil_root(n, k) == r);
        }
    }
}

TEST_CASE(
    "integer: floor_root and ceil_root are exact for large k, next to perfect powers and powers of two") {
    // Newton's start comes from a floating-point estimate of the root: these are the cases where an estimate
    // off by one ulp would land below the root (perfect powers and their neighbours, roots next to 2^52 and
    // 2^53, where the estimate changes form) or where the root is 1 (k at least n's bit count).
    const std::vector<Integer> roots{Integer(1),          Integer(2),      Integer(3),      two_to(52) - 1,
                                     two_to(52),          two_to(53) + 1,  two_to(62),      two_to(62) + 1,
                                     two_to(100) + 12345, two_to(150) - 1, Integer(1000003)};
    for (const Integer& r : roots) {
        for (unsigned k : {2u, 3u, 17u, 64u, 655u, 1000u}) {
            const Integer n = constrint::power(r, k);
            if (boost::multiprecision::msb(n) > 70000)
                continue; // beyond what the solver computes (kMaxTermBits)
            CAPTURE(r);
            CAPTURE(k);
            CHECK(constrint::floor_root(n, k) == r);
            CHECK(constrint::ceil_root(n, k) == r);
            CHECK(constrint::floor_root(n - 1, k) == r - 1);
            CHECK(constrint::floor_root(n + 1, k) == r);
            CHECK(constrint::ceil_root(n + 1, k) == r + 1);
        }
    }
    // The root is 1 whenever 2 <= n < 2^k.
    for (unsigned k : {2u, 7u, 64u, 65u, 655u}) {
        CHECK(constrint::floor_root(two_to(k) - 1, k) == 1);
        CHECK(constrint::floor_root(two_to(k), k) == 2);
        CHECK(constrint::ceil_root(two_to(k) - 1, k) == 2);
    }
}

TEST_CASE("integer: floor_root and ceil_root are exact on huge n, at and next to perfect powers") {
    const std::vector<Integer> roots{two_to(100) + 12345, two_to(64) - 1, two_to(64),     two_to(64) + 1,
                                     Integer(2),          Integer(3),     two_to(200) - 1};
    for (const Integer& r : roots) {
        for (unsigned k = 1; k <= 7; ++k) {
            CAPTURE(r);
            CAPTURE(k);
            const Integer n = constrint::power(r, k);
            CHECK(constrint::floor_root(n, k) == r);
            CHECK(constrint::ceil_root(n, k) == r);
            CHECK(constrint::floor_root(n - 1, k) == r - 1);
            CHECK(constrint::ceil_root(n - 1, k) == (k == 1 ? r - 1 : r));
            CHECK(constrint::floor_root(n + 1, k) == (k == 1 ? r + 1 : r));
            CHECK(constrint::ceil_root(n + 1, k) == r + 1);
        }
    }
    // Arbitrary huge n: r^k <= n < (r + 1)^k.
    Integer n = 1;
    for (int i = 0; i < 40; ++i) {
        n = n * 1000003 + 999983; // grows to ~ 2^800
        for (unsigned k = 1; k <= 7; ++k) {
            CAPTURE(n);
            CAPTURE(k);
            const Integer r = constrint::floor_root(n, k);
            CHECK(constrint::power(r, k) <= n);
            CHECK(constrint::power(r + 1, k) > n);
            const Integer c = constrint::ceil_root(n, k);
            CHECK(constrint::power(c, k) >= n);
            CHECK((c == 0 || constrint::power(c - 1, k) < n));
        }
    }
}

TEST_CASE("integer: power") {
    CHECK(constrint::power(0, 0) == 1);
    CHECK(constrint::power(-3, 0) == 1);
    CHECK(constrint::power(-3, 3) == -27);
    CHECK(constrint::power(-2, 4) == 16);
    CHECK(constrint::power(2, 100) == two_to(100));
    CHECK(constrint::power(-(two_to(40)), 3) == -two_to(120));
}

TEST_CASE("integer: mod_inverse") {
    for (long long m = 1; m <= 60; ++m) {
        for (long long a = -60; a <= 60; ++a) {
            if (brute_gcd(a, m) != 1) continue;
            CAPTURE(a);
            CAPTURE(m);
            const Integer inv = constrint::mod_inverse(a, m);
            CHECK(inv >= 0);
            CHECK(inv < m);
            CHECK(constrint::floor_mod(Integer(a) * inv - 1, m) == 0);
        }
    }
    const Integer m = two_to(127) - 1; // prime
    for (const Integer& a :
         std::vector<Integer>{two_to(100) + 3, -(two_to(100) + 3), Integer(2), m - 1, m + 5}) {
        CAPTURE(a);
        const Integer inv = constrint::mod_inverse(a, m);
        CHECK(inv >= 0);
        CHECK(inv < m);
        CHECK(constrint::floor_mod(a * inv, m) == 1);
    }
    // A composite modulus beyond 2^64.
    const Integer composite = two_to(80) * 3;
    const Integer a = two_to(70) + 1; // odd and not a multiple of 3
    CHECK(constrint::floor_mod(a * constrint::mod_inverse(a, composite), composite) == 1);
}

TEST_CASE("integer: positive_divisors matches brute force up to 2000, for both signs") {
    for (long long n = -2000; n <= 2000; ++n) {
        if (n == 0) continue;
        CAPTURE(n);
        const auto divisors = constrint::positive_divisors(n, 1000);
        REQUIRE(divisors.has_value());
        CHECK(*divisors == brute_divisors(n));
    }
}

TEST_CASE("integer: positive_divisors of large numbers") {
    SUBCASE("2^80 * 3^7 has 81 * 8 = 648 divisors, sorted and each dividing") {
        const Integer n = two_to(80) * constrint::power(3, 7);
        const auto divisors = constrint::positive_divisors(n, 1000);
        REQUIRE(divisors.has_value());
        CHECK(divisors->size() == 648);
        CHECK(divisors->front() == 1);
        CHECK(divisors->back() == n);
        for (std::size_t i = 0; i < divisors->size(); ++i) {
            CHECK(n % (*divisors)[i] == 0);
            if (i > 0) CHECK((*divisors)[i - 1] < (*divisors)[i]);
        }
        // Negative n has the same positive divisors.
        CHECK(constrint::positive_divisors(-n, 1000) == divisors);
    }
    SUBCASE("max_count is respected: exactly enough is fine, one fewer is refused") {
        const Integer n = two_to(80) * constrint::power(3, 7);
        CHECK(constrint::positive_divisors(n, 648).has_value());
        CHECK_FALSE(constrint::positive_divisors(n, 647).has_value());
        CHECK(constrint::positive_divisors(720720, 240).has_value()); // 240 divisors
        CHECK_FALSE(constrint::positive_divisors(720720, 239).has_value());
        CHECK(constrint::positive_divisors(1, 1) == std::vector<Integer>{1});
        CHECK_FALSE(constrint::positive_divisors(1, 0).has_value());
        CHECK_FALSE(constrint::positive_divisors(6, 3).has_value());
    }
    SUBCASE("a product of two ~40-bit primes is factored") {
        const Integer p = next_prime(two_to(39) + 12345);
        const Integer q = next_prime(two_to(40) + 54321);
        const auto divisors = constrint::positive_divisors(p * q, 100);
        REQUIRE(divisors.has_value());
        CHECK(*divisors == std::vector<Integer>{1, p, q, p * q});
    }
    SUBCASE("primes, prime powers and squares of primes above the trial-division limit") {
        const Integer m89 = two_to(89) - 1;
        CHECK(constrint::positive_divisors(m89, 10) == std::vector<Integer>{1, m89});
        const Integer p = 4099; // prime, just above the trial-division bound 4096
        CHECK(constrint::positive_divisors(p * p, 10) == std::vector<Integer>{1, p, p * p});
        const Integer m31 = two_to(31) - 1;
        CHECK(constrint::positive_divisors(m31 * m31, 10) == std::vector<Integer>{1, m31, m31 * m31});
        CHECK(constrint::positive_divisors(m31 * m31 * m31, 10) ==
              std::vector<Integer>{1, m31, m31 * m31, m31 * m31 * m31});
        const Integer q = next_prime(two_to(30));
        const auto mixed = constrint::positive_divisors(12 * m31 * q, 100);
        REQUIRE(mixed.has_value());
        CHECK(mixed->size() == 6 * 2 * 2);
        for (const Integer& d : *mixed)
            CHECK((12 * m31 * q) % d == 0);
    }
}

TEST_CASE("integer: parse_integer and to_string round trip beyond 2^64") {
    const std::vector<Integer> values{0,
                                      1,
                                      -1,
                                      two_to(63) - 1,
                                      -two_to(63),
                                      two_to(64),
                                      -two_to(64),
                                      two_to(64) + 1,
                                      two_to(200) + 12345,
                                      -(two_to(300) - 1),
                                      constrint::power(10, 40)};
    for (const Integer& v : values) {
        const std::string text = constrint::to_string(v);
        CAPTURE(text);
        CHECK(constrint::parse_integer(text) == v);
    }
    CHECK(constrint::to_string(two_to(64)) == "18446744073709551616");
    CHECK(constrint::to_string(-two_to(64)) == "-18446744073709551616");
    CHECK(constrint::to_string(constrint::power(10, 30)) == "1000000000000000000000000000000");
    CHECK(constrint::parse_integer("18446744073709551616") == two_to(64));
    CHECK(constrint::parse_integer("-340282366920938463463374607431768211456") == -two_to(128));
    CHECK(constrint::parse_integer("+42") == 42);
    CHECK(constrint::parse_integer("-0") == 0);
}

TEST_CASE("integer: parse_integer rejects text that is not a decimal integer") {
    for (const char* bad : {"", "-", "+", "--1", "+-1", "12a", "a12", " 12", "12 ", "1 2", "1.5", "0x10",
                            "1e5", "١٢", "12-", "∞"}) {
        CAPTURE(std::string(bad));
        CHECK_FALSE(constrint::parse_integer(bad).has_value());
    }
}

TEST_CASE("integer: compare agrees with boost's comparison, one limb and beyond, every sign") {
    std::vector<Integer> values;
    for (const Integer& magnitude :
         {Integer(0), Integer(1), Integer(2), Integer(1) << 63, (Integer(1) << 64) - 1, Integer(1) << 64,
          (Integer(1) << 64) + 1, Integer(1) << 130}) {
        values.push_back(magnitude);
        values.push_back(-magnitude); // -0 included: it must equal 0
    }
    for (const Integer& a : values) {
        for (const Integer& b : values) {
            const int expected = a < b ? -1 : a > b ? 1 : 0;
            CHECK_MESSAGE(constrint::compare(a, b) == expected, a << " vs " << b);
        }
    }
}

TEST_CASE("positive_divisors: a stop that says yes ends the factoring at its next block of steps") {
    // (2^89 - 1)(2^107 - 1): two large primes, beyond what the step budget can split.
    const Integer n = (pow(Integer(2), 89) - 1) * (pow(Integer(2), 107) - 1);
    int asked = 0;
    CHECK_FALSE(constrint::positive_divisors(n, 1000, [&] {
        ++asked;
        return true;
    }));
    CHECK(asked == 1);
    int asked_without_stopping = 0;
    CHECK_FALSE(constrint::positive_divisors(n, 1000, [&] {
        ++asked_without_stopping;
        return false;
    }));
    CHECK(asked_without_stopping > 100); // the whole step budget, a block at a time
    const auto small = constrint::positive_divisors(Integer(1000003) * 1000033, 10, [] { return false; });
    REQUIRE(small);
    CHECK(small->size() == 4);
}

TEST_CASE("integer: positive_divisors of products of large primes (issue 24), both factoring paths") {
    SUBCASE("a 90-bit product of two 45-bit primes") {
        const Integer p("35184372088777"), q("35184372088891");
        CHECK(p * q == Integer("1237940039285521012387476307"));
        CHECK(constrint::positive_divisors(p * q, 100) == std::vector<Integer>{1, p, q, p * q});
        CHECK(constrint::positive_divisors(p * p, 100) == std::vector<Integer>{1, p, p * p});
    }
    SUBCASE("products around 2^126, where machine words give way to cpp_int") {
        const Integer small = next_prime(Integer(1) << 20);
        for (unsigned bits : {100u, 124u, 125u, 126u, 127u, 128u, 140u}) {
            const Integer large = next_prime((Integer(1) << (bits - 21)) + 3);
            const Integer n = small * large;
            CHECK(constrint::positive_divisors(n, 100) == std::vector<Integer>{1, small, large, n});
        }
    }
    SUBCASE("random products of two primes of 14 to 40 bits") {
        std::mt19937_64 rng(24);
        for (int i = 0; i < 60; ++i) {
            const Integer a = next_prime(Integer(rng() >> (24 + rng() % 26)) + 4097);
            const Integer b = next_prime(Integer(rng() >> (24 + rng() % 26)) + 4097);
            std::vector<Integer> expected{1, a, b, a * b};
            std::sort(expected.begin(), expected.end());
            expected.erase(std::unique(expected.begin(), expected.end()), expected.end());
            CHECK(constrint::positive_divisors(a * b, 100) == expected);
        }
    }
}

// Issue 24: the elliptic curve method finds the factors Pollard-Brent's budget cannot (above ~2^40).
// The primes are the first after fixed odd numbers, each checked prime here; the curves are
// deterministic, so are the counts and times of these runs (docs/solver.md has them).
TEST_CASE("integer: positive_divisors of products of two primes of 50, 60 and 64 bits (ECM)") {
    const auto check_product = [](const Integer& p, const Integer& q) {
        REQUIRE(boost::multiprecision::miller_rabin_test(p, 30));
        REQUIRE(boost::multiprecision::miller_rabin_test(q, 30));
        INFO(p, " * ", q);
        CHECK(constrint::positive_divisors(p * q, 100) ==
              std::vector<Integer>{1, std::min(p, q), std::max(p, q), p * q});
    };
    check_product(Integer("994013110606889"), Integer("848826243205987"));           // 50 bits each
    check_product(Integer("973443068684375797"), Integer("764418451606675909"));     // 60 bits each
    check_product(Integer("16322054339552623031"), Integer("11898796943140571731")); // 64 bits each
    // 200 bits: a 60-bit prime times a 140-bit one.
    check_product(Integer("624530396758695941"), Integer("915715805858456173619807395493103745187341"));
}

TEST_CASE("integer: ECM interrupted by its stop check, and its work budget") {
    // Two 100-bit primes: far beyond the curves' reach, so only the stop or the budget ends it.
    const Integer p = next_prime(two_to(99) + 12345), q = next_prime(two_to(99) + 987654321);
    const Integer n = p * q;
    int asked = 0;
    std::uint64_t budget = std::uint64_t{1} << 40;
    CHECK_FALSE(constrint::detail::ecm_factor(n, budget, [&] { return ++asked == 20; }));
    CHECK(asked == 20);
    std::uint64_t small_budget = 3 * 40 * 2000 * 16; // three curves of the first level at 4 limbs
    asked = 0;
    CHECK_FALSE(constrint::detail::ecm_factor(n, small_budget, [&] { return ++asked, false; }));
    CHECK(small_budget < 40 * 2000 * 16);
    CHECK(asked > 0);
    // positive_divisors asks through Pollard-Brent and then ECM, and stops at the first yes.
    asked = 0;
    CHECK_FALSE(constrint::positive_divisors(n, 100, [&] { return ++asked == 200; }));
    CHECK(asked == 200);
}

TEST_CASE("integer: Montgomery arithmetic over 2, 4, 8 and 16 limbs agrees with cpp_int") {
    std::mt19937_64 rng(7);
    const auto random_below = [&](const Integer& n) -> Integer {
        Integer v = 0;
        for (int i = 0; i < 17; ++i)
            v = (v << 64) | Integer(rng());
        return v % n;
    };
    const auto check_limbs = [&](auto limbs_tag, unsigned bits) {
        constexpr int Limbs = decltype(limbs_tag)::value;
        const Integer n = two_to(bits - 1) + random_below(two_to(bits - 2)) * 2 + 1; // odd, `bits` bits
        const constrint::detail::MontgomeryLimbs<Limbs> mod(n);
        const Integer r_inverse = constrint::mod_inverse(two_to(64 * Limbs) % n, n);
        for (int i = 0; i < 200; ++i) {
            const Integer a = random_below(n), b = random_below(n);
            const auto ma = mod.from_integer(a), mb = mod.from_integer(b);
            // Montgomery form of v is v * R mod n: raw_value(x) * R^-1 mod n is the plain value.
            const auto plain = [&](const auto& x) -> Integer { return mod.raw_value(x) * r_inverse % n; };
            CHECK(plain(mod.multiply(ma, mb)) == a * b % n);
            CHECK(plain(mod.add(ma, mb)) == (a + b) % n);
            CHECK(plain(mod.subtract(ma, mb)) == constrint::floor_mod(a - b, n));
        }
    };
    for (unsigned bits : {3u, 64u, 65u, 127u, 128u}) // 128 bits: sums carry out of the top word
        check_limbs(std::integral_constant<int, 2>{}, bits);
    for (unsigned bits : {129u, 200u, 256u})
        check_limbs(std::integral_constant<int, 4>{}, bits);
    check_limbs(std::integral_constant<int, 8>{}, 512);
    check_limbs(std::integral_constant<int, 16>{}, 1024);
}
