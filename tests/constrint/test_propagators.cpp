// Every propagator and term through the Gecode-style harness (propagator_harness.hpp): each test
// is a plain C++ predicate and the constraint that should mean the same thing.
#include "propagator_harness.hpp"

#include <boost/multiprecision/miller_rabin.hpp>

#include <cmath>

using namespace constrint;
using constrint::testing::Assignment;
using constrint::testing::check_propagator;
using constrint::testing::interval;
using constrint::testing::Vars;

namespace {

// The predicates work on machine integers: the small domains cannot overflow them.
long long v(const Assignment& a, std::size_t i) {
    return static_cast<long long>(a[i]);
}

// Floor division and its remainder by their definitions (exact in double for small values).
long long py_div(long long a, long long b) {
    return static_cast<long long>(std::floor(static_cast<double>(a) / b));
}
long long py_mod(long long a, long long b) {
    return a - b * py_div(a, b);
}

long long ipow(long long base, int k) {
    long long p = 1;
    for (int i = 0; i < k; ++i)
        p *= base;
    return p;
}

long long iabs(long long a) {
    return a < 0 ? -a : a;
}

const std::vector<Integer> kSmall = interval(-3, 3);
const std::vector<Integer> kNine = interval(-4, 4);

} // namespace

TEST_CASE("propagators: x + y == z") {
    check_propagator(
        "x + y == z", 3, kNine, [](const Assignment& a) { return v(a, 0) + v(a, 1) == v(a, 2); },
        [](Model& m, const Vars& x) { m.add(x[0] + x[1] == x[2]); });
    check_propagator(
        "x + y + 2 == z", 3, kNine, [](const Assignment& a) { return v(a, 0) + v(a, 1) + 2 == v(a, 2); },
        [](Model& m, const Vars& x) { m.add(x[0] + x[1] + 2 == x[2]); }, {300, 2});
    check_propagator(
        "z == x + y on [0, 5]", 3, interval(0, 5),
        [](const Assignment& a) { return v(a, 2) == v(a, 0) + v(a, 1); },
        [](Model& m, const Vars& x) { m.add(x[2] == x[0] + x[1]); }, {300, 3});
    check_propagator(
        "x + x == y", 2, kNine, [](const Assignment& a) { return 2 * v(a, 0) == v(a, 1); },
        [](Model& m, const Vars& x) { m.add(x[0] + x[0] == x[1]); }, {300, 4});
}

TEST_CASE("propagators: x - y == z and -x == y") {
    check_propagator(
        "x - y == z", 3, kNine, [](const Assignment& a) { return v(a, 0) - v(a, 1) == v(a, 2); },
        [](Model& m, const Vars& x) { m.add(x[0] - x[1] == x[2]); }, {300, 5});
    check_propagator(
        "x - x == y", 2, kNine, [](const Assignment& a) { return v(a, 1) == 0; },
        [](Model& m, const Vars& x) { m.add(x[0] - x[0] == x[1]); }, {300, 6});
    check_propagator(
        "-x == y", 2, kNine, [](const Assignment& a) { return -v(a, 0) == v(a, 1); },
        [](Model& m, const Vars& x) { m.add(-x[0] == x[1]); }, {300, 7});
    check_propagator(
        "-(x + y) == z", 3, kSmall, [](const Assignment& a) { return -(v(a, 0) + v(a, 1)) == v(a, 2); },
        [](Model& m, const Vars& x) { m.add(-(x[0] + x[1]) == x[2]); }, {300, 8});
}

TEST_CASE("propagators: x * y == z") {
    check_propagator(
        "x * y == z", 3, kNine, [](const Assignment& a) { return v(a, 0) * v(a, 1) == v(a, 2); },
        [](Model& m, const Vars& x) { m.add(x[0] * x[1] == x[2]); }, {400, 9});
    check_propagator(
        "x * x == y", 2, kNine, [](const Assignment& a) { return v(a, 0) * v(a, 0) == v(a, 1); },
        [](Model& m, const Vars& x) { m.add(x[0] * x[0] == x[1]); }, {300, 10});
    check_propagator(
        "x * x == y, y in {0, 1, 2, 4, 8, 9, 16} (a square, posted as x^2)", {kNine, {0, 1, 2, 4, 8, 9, 16}},
        [](const Assignment& a) { return v(a, 0) * v(a, 0) == v(a, 1); },
        [](Model& m, const Vars& x) { m.add(x[0] * x[0] == x[1]); }, {300, 11});
    check_propagator(
        "x * y == x", 2, kNine, [](const Assignment& a) { return v(a, 0) * v(a, 1) == v(a, 0); },
        [](Model& m, const Vars& x) { m.add(x[0] * x[1] == x[0]); }, {300, 11});
    check_propagator(
        "x * y == z, z in [-12, 12] step 3", {kSmall, kSmall, {-12, -9, -6, -3, 0, 3, 6, 9, 12}},
        [](const Assignment& a) { return v(a, 0) * v(a, 1) == v(a, 2); },
        [](Model& m, const Vars& x) { m.add(x[0] * x[1] == x[2]); }, {300, 12});
}

// Issue 24: with x <= y known (a top-level order between the factors), the product narrows by integer
// square roots of its bounds; every spelling of the order, both signs and 0 in the domains.
TEST_CASE("propagators: x * y == z with an order between the factors (integer roots)") {
    const auto ordered_product = [](const Assignment& a) {
        return v(a, 0) * v(a, 1) == v(a, 2) && v(a, 0) <= v(a, 1);
    };
    check_propagator("x * y == z, x <= y", 3, kNine, ordered_product,
                     [](Model& m, const Vars& x) {
                         m.add(x[0] * x[1] == x[2]);
                         m.add(x[0] <= x[1]);
                     },
                     {400, 30});
    check_propagator("x * y == z, y >= x, z in -16..16", {kNine, kNine, interval(-16, 16)}, ordered_product,
                     [](Model& m, const Vars& x) {
                         m.add(x[0] * x[1] == x[2]);
                         m.add(x[1] >= x[0]);
                     },
                     {400, 31});
    check_propagator(
        "y * x == z, x < y", 3, kNine,
        [](const Assignment& a) { return v(a, 0) * v(a, 1) == v(a, 2) && v(a, 0) < v(a, 1); },
        [](Model& m, const Vars& x) {
            m.add(x[1] * x[0] == x[2]);
            m.add(x[0] < x[1]);
        },
        {400, 32});
    check_propagator(
        "x * y == z, x + 1 <= y - 1 (an offset order)", 3, kNine,
        [](const Assignment& a) { return v(a, 0) * v(a, 1) == v(a, 2) && v(a, 0) + 2 <= v(a, 1); },
        [](Model& m, const Vars& x) {
            m.add(x[0] * x[1] == x[2]);
            m.add(x[0] + 1 <= x[1] - 1);
        },
        {400, 33});
    check_propagator(
        "x * y == z, x - 1 <= y (no order: x may exceed y by 1)", 3, kNine,
        [](const Assignment& a) { return v(a, 0) * v(a, 1) == v(a, 2) && v(a, 0) - 1 <= v(a, 1); },
        [](Model& m, const Vars& x) {
            m.add(x[0] * x[1] == x[2]);
            m.add(x[0] - 1 <= x[1]);
        },
        {400, 34});
    for (long long c : {0LL, 4LL, 9LL, 12LL, -6LL, 7LL, 16LL}) {
        check_propagator(
            "x * y == " + std::to_string(c) + ", x <= y", 2, kNine,
            [c](const Assignment& a) { return v(a, 0) * v(a, 1) == c && v(a, 0) <= v(a, 1); },
            [c](Model& m, const Vars& x) {
                m.add(x[0] * x[1] == c);
                m.add(x[0] <= x[1]);
            },
            {200, 300 + static_cast<std::uint64_t>(c + 10)});
    }
}

// Bounds of a huge product in one run: x <= isqrt(max z) and y >= ceil(sqrt(min z)), where quotients
// alone leave x up to max z / 2.
TEST_CASE("propagators: x * y == z with x <= y jumps to the square roots of z's bounds") {
    const Integer n("332306999515580059438846659749847479"); // 118 bits
    Model m;
    const Var x = m.var("x", Integer(2), n), y = m.var("y", Integer(2), n), z = m.var("z", n, 2 * n);
    m.add(x * y == z);
    m.add(x <= y);
    auto compiled = engine::compile(m);
    REQUIRE_FALSE(compiled->failed);
    engine::Store& s = compiled->store;
    REQUIRE(s.propagate());
    CHECK(s.max(x.index()) == floor_root(2 * n, 2));
    CHECK(s.min(y.index()) == ceil_root(n, 2));
    CHECK(s.max(y.index()) == n);
    // Times and LessEqual wake each other a few times (5 runs measured); Times does not wake
    // itself, as each run ends at its own fixpoint.
    CHECK(s.propagations() <= 5);
}

// A fixed product of two consecutive 520-bit primes is too long to factor (kMaxFactoredBits): the
// order jumps both factors to the square root, from where quotients reach p and q, a value per round.
TEST_CASE("propagators: x * y == p * q with x <= y, p and q consecutive primes beyond factoring") {
    Integer p = (Integer(1) << 520) + 1;
    while (!boost::multiprecision::miller_rabin_test(p, 25))
        ++p;
    Integer q = p + 1;
    while (!boost::multiprecision::miller_rabin_test(q, 25))
        ++q;
    const Integer n = p * q;
    REQUIRE(boost::multiprecision::msb(n) + 1 > kMaxFactoredBits);
    Model m;
    const Var x = m.var("x", Integer(1), n), y = m.var("y", Integer(1), n);
    m.add(x * y == n);
    m.add(x <= y);
    auto compiled = engine::compile(m);
    REQUIRE_FALSE(compiled->failed);
    engine::Store& s = compiled->store;
    REQUIRE(s.propagate());
    CHECK(s.max(x.index()) == p);
    CHECK(s.min(y.index()) == q);
    // About (q - p) / 2 rounds of 64 per run; without the order x would stay up to n.
    const Integer gap = q - p;
    MESSAGE("gap ", to_string(gap), ", propagations ", s.propagations());
    CHECK(s.propagations() <= 4 + gap / 64);
}

TEST_CASE("propagators: x * y == c for constants c, 0 included") {
    for (long long c : {0LL, 1LL, -1LL, 4LL, -6LL, 12LL, 7LL, 17LL}) {
        check_propagator(
            "x * y == " + std::to_string(c), 2, kNine,
            [c](const Assignment& a) { return v(a, 0) * v(a, 1) == c; },
            [c](Model& m, const Vars& x) { m.add(x[0] * x[1] == c); },
            {200, 100 + static_cast<std::uint64_t>(c + 10)});
    }
    check_propagator(
        "c == x * y with c = 6", 2, kNine, [](const Assignment& a) { return 6 == v(a, 0) * v(a, 1); },
        [](Model& m, const Vars& x) { m.add(6 == x[0] * x[1]); }, {200, 13});
}

TEST_CASE("propagators: pow(x, k) == y for k = 0..5") {
    for (int k = 0; k <= 5; ++k) {
        // y ranges over the powers of [-3, 3], their neighbours and negations: hits and misses.
        std::set<Integer> ys;
        for (long long b = -3; b <= 3; ++b) {
            const long long p = ipow(b, k);
            for (long long w : {p, p + 1, p - 1, -p})
                ys.insert(w);
        }
        const std::vector<Integer> y_values(ys.begin(), ys.end());
        check_propagator(
            "pow(x, " + std::to_string(k) + ") == y", {kSmall, y_values},
            [k](const Assignment& a) { return ipow(v(a, 0), k) == v(a, 1); },
            [k](Model& m, const Vars& x) { m.add(pow(x[0], k) == x[1]); },
            {300, 200 + static_cast<std::uint64_t>(k)});
    }
    check_propagator(
        "pow(x - y, 2) == z", {kSmall, kSmall, interval(0, 8)},
        [](const Assignment& a) { return ipow(v(a, 0) - v(a, 1), 2) == v(a, 2); },
        [](Model& m, const Vars& x) { m.add(pow(x[0] - x[1], 2) == x[2]); }, {300, 14});
    check_propagator(
        "pow(x, 3) == y + z", 3, kNine,
        [](const Assignment& a) { return ipow(v(a, 0), 3) == v(a, 1) + v(a, 2); },
        [](Model& m, const Vars& x) { m.add(pow(x[0], 3) == x[1] + x[2]); }, {300, 15});
}

TEST_CASE("propagators: x / y == z (floor division)") {
    check_propagator(
        "x / y == z", 3, kNine,
        [](const Assignment& a) { return v(a, 1) != 0 && py_div(v(a, 0), v(a, 1)) == v(a, 2); },
        [](Model& m, const Vars& x) { m.add(x[0] / x[1] == x[2]); }, {400, 16});
    check_propagator(
        "x / 3 == y", 2, kNine, [](const Assignment& a) { return py_div(v(a, 0), 3) == v(a, 1); },
        [](Model& m, const Vars& x) { m.add(x[0] / 3 == x[1]); }, {300, 17});
    check_propagator(
        "x / -2 == y", 2, kNine, [](const Assignment& a) { return py_div(v(a, 0), -2) == v(a, 1); },
        [](Model& m, const Vars& x) { m.add(x[0] / -2 == x[1]); }, {300, 18});
    check_propagator(
        "7 / x == y", 2, kNine,
        [](const Assignment& a) { return v(a, 0) != 0 && py_div(7, v(a, 0)) == v(a, 1); },
        [](Model& m, const Vars& x) { m.add(7 / x[0] == x[1]); }, {300, 19});
}

TEST_CASE("propagators: x % y == z (floor modulo, the sign of the divisor)") {
    check_propagator(
        "x % y == z", 3, kNine,
        [](const Assignment& a) { return v(a, 1) != 0 && py_mod(v(a, 0), v(a, 1)) == v(a, 2); },
        [](Model& m, const Vars& x) { m.add(x[0] % x[1] == x[2]); }, {400, 20});
    check_propagator(
        "x % 3 == y", 2, kNine, [](const Assignment& a) { return py_mod(v(a, 0), 3) == v(a, 1); },
        [](Model& m, const Vars& x) { m.add(x[0] % 3 == x[1]); }, {300, 21});
    check_propagator(
        "x % -3 == y", 2, kNine, [](const Assignment& a) { return py_mod(v(a, 0), -3) == v(a, 1); },
        [](Model& m, const Vars& x) { m.add(x[0] % -3 == x[1]); }, {300, 22});
    check_propagator(
        "x % y == 1", 2, kNine,
        [](const Assignment& a) { return v(a, 1) != 0 && py_mod(v(a, 0), v(a, 1)) == 1; },
        [](Model& m, const Vars& x) { m.add(x[0] % x[1] == 1); }, {300, 23});
    check_propagator(
        "x == y * (x / y) + x % y", 2, kNine, [](const Assignment& a) { return v(a, 1) != 0; },
        [](Model& m, const Vars& x) { m.add(x[0] == x[1] * (x[0] / x[1]) + x[0] % x[1]); }, {300, 24});
}

TEST_CASE("propagators: a divisor whose only value is 0 makes its constraint false") {
    // docs/model-format.md: a term x / 0 or mod(x, 0), and divisibility by 0, falsify the whole
    // constraint, inside a disjunction too.
    const auto never = [](const Assignment&) { return false; };
    check_propagator("x / 0 == y", 2, kNine, never, [](Model& m, const Vars& x) { m.add(x[0] / 0 == x[1]); },
                     {100, 900});
    check_propagator("(x / 0 == y) | (x == 1)", 2, kNine, never,
                     [](Model& m, const Vars& x) { m.add((x[0] / 0 == x[1]) | (x[0] == 1)); }, {100, 901});
    check_propagator("(x % z == y) | (x == 1), z in 0..0", {interval(-2, 2), interval(-2, 2), {0}}, never,
                     [](Model& m, const Vars& x) { m.add((x[0] % x[2] == x[1]) | (x[0] == 1)); }, {100, 902});
    check_propagator("x % 0 == 0", 1, kNine, never, [](Model& m, const Vars& x) { m.add(x[0] % 0 == 0); },
                     {100, 903});
    check_propagator("(x % 0 == 0) | (x == y)", 2, kNine, never,
                     [](Model& m, const Vars& x) { m.add((x[0] % 0 == 0) | (x[0] == x[1])); }, {100, 904});
    check_propagator("divides(z, x) | (x == y), z in 0..0", {interval(-2, 2), interval(-2, 2), {0}}, never,
                     [](Model& m, const Vars& x) { m.add(divides(x[2], x[0]) | (x[0] == x[1])); },
                     {100, 905});
}

TEST_CASE("propagators: every spelling of divisibility requires a non-zero divisor, in a disjunction too") {
    // Issue 24: mod(x, y) == 0 is rewritten into divides(y, x); both, like mod(x, y) == 1 - 1 and
    // x / y, exclude y = 0 from the whole constraint, so `| y == 0` adds no solution.
    const std::vector<std::vector<Integer>> domains = {interval(-3, 3), interval(-2, 2), interval(-1, 1)};
    const auto divisible_or_z_zero = [](const Assignment& a) {
        return v(a, 1) != 0 && (py_mod(v(a, 0), v(a, 1)) == 0 || v(a, 2) == 0);
    };
    using Spelling = std::pair<const char*, std::function<Constraint(const Vars&)>>;
    const std::vector<Spelling> spellings = {
        {"mod(x, y) == 0", [](const Vars& x) { return x[0] % x[1] == 0; }},
        {"0 == mod(x, y)", [](const Vars& x) { return 0 == x[0] % x[1]; }},
        {"mod(x, y) == 1 - 1", [](const Vars& x) { return x[0] % x[1] == Expr(1) - Expr(1); }},
        {"divides(y, x)", [](const Vars& x) { return divides(x[1], x[0]); }},
        {"x == y * (x / y)", [](const Vars& x) { return x[0] == x[1] * (x[0] / x[1]); }},
    };
    std::uint64_t seed = 910;
    for (const Spelling& entry : spellings) {
        const char* name = entry.first;
        const auto& spelling = entry.second; // not a structured binding: Clang 14 cannot capture one
        check_propagator(std::string(name) + " | z == 0", domains, divisible_or_z_zero,
                         [&](Model& m, const Vars& x) { m.add(spelling(x) | (x[2] == 0)); }, {200, seed++});
        check_propagator(
            std::string(name) + " | y == 0", {interval(-3, 3), interval(-2, 2)},
            [](const Assignment& a) { return v(a, 1) != 0 && py_mod(v(a, 0), v(a, 1)) == 0; },
            [&](Model& m, const Vars& x) { m.add(spelling(x) | (x[1] == 0)); }, {200, seed++});
        check_propagator(
            std::string("(") + name + " & x == 1) | y == 0", {interval(-3, 3), interval(-2, 2)},
            [](const Assignment& a) { return v(a, 1) != 0 && v(a, 0) == 1 && py_mod(1, v(a, 1)) == 0; },
            [&](Model& m, const Vars& x) { m.add((spelling(x) & (x[0] == 1)) | (x[1] == 0)); },
            {200, seed++});
    }
    check_propagator(
        "x / y == 2 | y == 0", {interval(-6, 6), interval(-2, 2)},
        [](const Assignment& a) { return v(a, 1) != 0 && py_div(v(a, 0), v(a, 1)) == 2; },
        [](Model& m, const Vars& x) { m.add((x[0] / x[1] == 2) | (x[1] == 0)); }, {200, seed++});
}

TEST_CASE("propagators: abs, min, max") {
    check_propagator(
        "abs(x) == y", 2, kNine, [](const Assignment& a) { return iabs(v(a, 0)) == v(a, 1); },
        [](Model& m, const Vars& x) { m.add(abs(x[0]) == x[1]); }, {300, 25});
    check_propagator(
        "abs(x - y) == z", 3, kNine, [](const Assignment& a) { return iabs(v(a, 0) - v(a, 1)) == v(a, 2); },
        [](Model& m, const Vars& x) { m.add(abs(x[0] - x[1]) == x[2]); }, {300, 26});
    check_propagator(
        "min(x, y) == z", 3, kNine, [](const Assignment& a) { return std::min(v(a, 0), v(a, 1)) == v(a, 2); },
        [](Model& m, const Vars& x) { m.add(min(x[0], x[1]) == x[2]); }, {300, 27});
    check_propagator(
        "max(x, y) == z", 3, kNine, [](const Assignment& a) { return std::max(v(a, 0), v(a, 1)) == v(a, 2); },
        [](Model& m, const Vars& x) { m.add(max(x[0], x[1]) == x[2]); }, {300, 28});
    check_propagator(
        "min(x, x) == y", 2, kNine, [](const Assignment& a) { return v(a, 0) == v(a, 1); },
        [](Model& m, const Vars& x) { m.add(min(x[0], x[0]) == x[1]); }, {300, 29});
    check_propagator(
        "max(x, -x) == y", 2, kNine, [](const Assignment& a) { return iabs(v(a, 0)) == v(a, 1); },
        [](Model& m, const Vars& x) { m.add(max(x[0], -x[0]) == x[1]); }, {300, 30});
    check_propagator(
        "min(x, 1) == y", 2, kNine, [](const Assignment& a) { return std::min(v(a, 0), 1LL) == v(a, 1); },
        [](Model& m, const Vars& x) { m.add(min(x[0], 1) == x[1]); }, {300, 31});
}

TEST_CASE("propagators: the relations ==, !=, <=, <, >=, >") {
    using Rel = std::function<bool(long long, long long)>;
    using Post = std::function<Constraint(const Expr&, const Expr&)>;
    const std::vector<std::tuple<std::string, Rel, Post>> relations{
        {"==", [](long long p, long long q) { return p == q; },
         [](const Expr& p, const Expr& q) { return p == q; }},
        {"!=", [](long long p, long long q) { return p != q; },
         [](const Expr& p, const Expr& q) { return p != q; }},
        {"<=", [](long long p, long long q) { return p <= q; },
         [](const Expr& p, const Expr& q) { return p <= q; }},
        {"<", [](long long p, long long q) { return p < q; },
         [](const Expr& p, const Expr& q) { return p < q; }},
        {">=", [](long long p, long long q) { return p >= q; },
         [](const Expr& p, const Expr& q) { return p >= q; }},
        {">", [](long long p, long long q) { return p > q; },
         [](const Expr& p, const Expr& q) { return p > q; }},
    };
    std::uint64_t seed = 300;
    for (const auto& [op, holds, relate] : relations) {
        const Rel& h = holds;
        const Post& r = relate;
        check_propagator(
            "x " + op + " y", 2, kNine, [h](const Assignment& a) { return h(v(a, 0), v(a, 1)); },
            [r](Model& m, const Vars& x) { m.add(r(x[0], x[1])); }, {200, ++seed, true});
        // Views: scaled and shifted sides, constants on either side, the same variable twice.
        // Without an auxiliary variable and without aliasing, these propagate domain-consistently.
        check_propagator(
            "2 * x + 1 " + op + " 3 - y", 2, kNine,
            [h](const Assignment& a) { return h(2 * v(a, 0) + 1, 3 - v(a, 1)); },
            [r](Model& m, const Vars& x) { m.add(r(2 * x[0] + 1, 3 - x[1])); }, {200, ++seed, true});
        check_propagator(
            "-3 * x " + op + " 2 * y - 1", 2, kNine,
            [h](const Assignment& a) { return h(-3 * v(a, 0), 2 * v(a, 1) - 1); },
            [r](Model& m, const Vars& x) { m.add(r(-3 * x[0], 2 * x[1] - 1)); }, {200, ++seed, true});
        check_propagator(
            "2 " + op + " x", 1, kNine, [h](const Assignment& a) { return h(2, v(a, 0)); },
            [r](Model& m, const Vars& x) { m.add(r(2, x[0])); }, {100, ++seed, true});
        check_propagator(
            "x " + op + " -1", 1, kNine, [h](const Assignment& a) { return h(v(a, 0), -1); },
            [r](Model& m, const Vars& x) { m.add(r(x[0], -1)); }, {100, ++seed, true});
        check_propagator(
            "2 * x " + op + " x", 1, kNine, [h](const Assignment& a) { return h(2 * v(a, 0), v(a, 0)); },
            [r](Model& m, const Vars& x) { m.add(r(2 * x[0], x[0])); }, {100, ++seed});
        check_propagator(
            "x * 0 + y " + op + " z - 1", 3, kSmall,
            [h](const Assignment& a) { return h(v(a, 1), v(a, 2) - 1); },
            [r](Model& m, const Vars& x) { m.add(r(x[0] * 0 + x[1], x[2] - 1)); }, {200, ++seed, true});
        check_propagator(
            "x + y " + op + " z", 3, kSmall,
            [h](const Assignment& a) { return h(v(a, 0) + v(a, 1), v(a, 2)); },
            [r](Model& m, const Vars& x) { m.add(r(x[0] + x[1], x[2])); }, {200, ++seed});
    }
}

TEST_CASE("propagators: divisibility, divides(x, y) and y % x == 0") {
    const auto divisible = [](const Assignment& a) { return v(a, 0) != 0 && v(a, 1) % v(a, 0) == 0; };
    check_propagator("divides(x, y)", 2, kNine, divisible,
                     [](Model& m, const Vars& x) { m.add(divides(x[0], x[1])); }, {300, 40});
    check_propagator("y % x == 0", 2, kNine, divisible,
                     [](Model& m, const Vars& x) { m.add(x[1] % x[0] == 0); }, {300, 41});
    check_propagator("0 == y % x", 2, kNine, divisible,
                     [](Model& m, const Vars& x) { m.add(0 == x[1] % x[0]); }, {300, 42});
    check_propagator("divides(x, y) on [-12, 12] divisors of 12",
                     {interval(-4, 4), {-12, -7, -6, 0, 5, 8, 9, 12}}, divisible,
                     [](Model& m, const Vars& x) { m.add(divides(x[0], x[1])); }, {300, 43});
    check_propagator(
        "divides(3, x + y)", 2, kNine, [](const Assignment& a) { return (v(a, 0) + v(a, 1)) % 3 == 0; },
        [](Model& m, const Vars& x) { m.add(divides(3, x[0] + x[1])); }, {300, 44});
    check_propagator(
        "(x * y) % z == 0", 3, kSmall,
        [](const Assignment& a) { return v(a, 2) != 0 && (v(a, 0) * v(a, 1)) % v(a, 2) == 0; },
        [](Model& m, const Vars& x) { m.add((x[0] * x[1]) % x[2] == 0); }, {300, 45});
    check_propagator(
        "divides(x, y) and divides(y, 2 * x + 2)", 2, kNine,
        [](const Assignment& a) {
            return v(a, 0) != 0 && v(a, 1) != 0 && v(a, 1) % v(a, 0) == 0 && (2 * v(a, 0) + 2) % v(a, 1) == 0;
        },
        [](Model& m, const Vars& x) {
            m.add(divides(x[0], x[1]));
            m.add(divides(x[1], 2 * x[0] + 2));
        },
        {300, 46});
    check_propagator(
        "x % 3 == 0, divides(x, y), divides(y, z): the congruence travels along the chain", 3, kSmall,
        [](const Assignment& a) {
            return v(a, 0) % 3 == 0 && v(a, 0) != 0 && v(a, 1) != 0 && v(a, 1) % v(a, 0) == 0 &&
                   v(a, 2) % v(a, 1) == 0;
        },
        [](Model& m, const Vars& x) {
            m.add(x[0] % 3 == 0);
            m.add(divides(x[0], x[1]));
            m.add(divides(x[1], x[2]));
        },
        {300, 47});
}

TEST_CASE("propagators: member") {
    const Domain set = Domain::values({-4, -1, 0, 2, 3});
    check_propagator(
        "member(x, {-4, -1, 0, 2, 3})", 1, kNine, [&](const Assignment& a) { return set.contains(v(a, 0)); },
        [&](Model& m, const Vars& x) { m.add(member(x[0], set)); }, {100, 50, true});
    check_propagator(
        "member(x + y, {-4, -1, 0, 2, 3})", 2, kNine,
        [&](const Assignment& a) { return set.contains(v(a, 0) + v(a, 1)); },
        [&](Model& m, const Vars& x) { m.add(member(x[0] + x[1], set)); }, {300, 51});
    Domain odd = Domain::range(-9, 9);
    odd.restrict_congruence(2, 1);
    check_propagator(
        "member(x * y, odd numbers)", 2, kNine,
        [](const Assignment& a) { return iabs(v(a, 0) * v(a, 1)) % 2 == 1; },
        [odd](Model& m, const Vars& x) { m.add(member(x[0] * x[1], odd)); }, {300, 52});
    check_propagator(
        "member(x, {})", 1, kSmall, [](const Assignment&) { return false; },
        [](Model& m, const Vars& x) { m.add(member(x[0], Domain())); }, {50, 53});
}

TEST_CASE("propagators: disjunctions and conjunctions inside them") {
    check_propagator(
        "(x == 1) | (y <= z)", 3, kSmall,
        [](const Assignment& a) { return v(a, 0) == 1 || v(a, 1) <= v(a, 2); },
        [](Model& m, const Vars& x) { m.add((x[0] == 1) | (x[1] <= x[2])); }, {300, 60});
    check_propagator(
        "(x == 1) | (y == 2) | (z != x)", 3, kSmall,
        [](const Assignment& a) { return v(a, 0) == 1 || v(a, 1) == 2 || v(a, 2) != v(a, 0); },
        [](Model& m, const Vars& x) { m.add((x[0] == 1) | (x[1] == 2) | (x[2] != x[0])); }, {300, 61});
    check_propagator(
        "((x == y) & (y != 0)) | (z < x)", 3, kSmall,
        [](const Assignment& a) { return (v(a, 0) == v(a, 1) && v(a, 1) != 0) || v(a, 2) < v(a, 0); },
        [](Model& m, const Vars& x) { m.add(((x[0] == x[1]) & (x[1] != 0)) | (x[2] < x[0])); }, {300, 62});
    check_propagator(
        "((x < y) & (y < z)) | ((x > y) & (y > z))", 3, kSmall,
        [](const Assignment& a) {
            return (v(a, 0) < v(a, 1) && v(a, 1) < v(a, 2)) || (v(a, 0) > v(a, 1) && v(a, 1) > v(a, 2));
        },
        [](Model& m, const Vars& x) {
            m.add(((x[0] < x[1]) & (x[1] < x[2])) | ((x[0] > x[1]) & (x[1] > x[2])));
        },
        {300, 63});
    check_propagator(
        "(abs(x - y) <= 1) | (max(x, z) == y)", 3, kSmall,
        [](const Assignment& a) {
            return iabs(v(a, 0) - v(a, 1)) <= 1 || std::max(v(a, 0), v(a, 2)) == v(a, 1);
        },
        [](Model& m, const Vars& x) { m.add((abs(x[0] - x[1]) <= 1) | (max(x[0], x[2]) == x[1])); },
        {300, 64});
    check_propagator(
        "(x * y == 2) | member(z, {0, 3})", 3, kSmall,
        [](const Assignment& a) { return v(a, 0) * v(a, 1) == 2 || v(a, 2) == 0 || v(a, 2) == 3; },
        [](Model& m, const Vars& x) {
            m.add((x[0] * x[1] == 2) | member(x[2], Domain::values({0, 3})));
        },
        {300, 65});
    check_propagator(
        "divides(x, y) | (x == z)", 3, kSmall,
        [](const Assignment& a) { return v(a, 0) != 0 && (v(a, 1) % v(a, 0) == 0 || v(a, 0) == v(a, 2)); },
        [](Model& m, const Vars& x) { m.add(divides(x[0], x[1]) | (x[0] == x[2])); }, {300, 66});
    // A division by zero anywhere makes the whole constraint false (constraint.hpp).
    check_propagator(
        "(x / y == z) | (x == 1)", 3, kSmall,
        [](const Assignment& a) {
            return v(a, 1) != 0 && (py_div(v(a, 0), v(a, 1)) == v(a, 2) || v(a, 0) == 1);
        },
        [](Model& m, const Vars& x) { m.add((x[0] / x[1] == x[2]) | (x[0] == 1)); }, {300, 67});
    check_propagator(
        "(x == 0) & (y == 0) inside (... ) | (z == 2)", 3, kSmall,
        [](const Assignment& a) { return (v(a, 0) == 0 && v(a, 1) == 0) || v(a, 2) == 2; },
        [](Model& m, const Vars& x) { m.add(((x[0] == 0) & (x[1] == 0)) | (x[2] == 2)); }, {300, 68});
    check_propagator(
        "top-level conjunction (x <= y) & (y <= z)", 3, kSmall,
        [](const Assignment& a) { return v(a, 0) <= v(a, 1) && v(a, 1) <= v(a, 2); },
        [](Model& m, const Vars& x) { m.add((x[0] <= x[1]) & (x[1] <= x[2])); }, {300, 69});
}

TEST_CASE("propagators: nested terms, a term used twice, constants on either side") {
    check_propagator(
        "(x + y) * z - abs(x) == y", 3, kNine,
        [](const Assignment& a) { return (v(a, 0) + v(a, 1)) * v(a, 2) - iabs(v(a, 0)) == v(a, 1); },
        [](Model& m, const Vars& x) { m.add((x[0] + x[1]) * x[2] - abs(x[0]) == x[1]); }, {400, 70});
    check_propagator(
        "t + t == z with t = x * y shared", 3, kNine,
        [](const Assignment& a) { return 2 * v(a, 0) * v(a, 1) == v(a, 2); },
        [](Model& m, const Vars& x) {
            const Expr t = x[0] * x[1];
            m.add(t + t == x[2]);
        },
        {300, 71});
    check_propagator(
        "t * t == z + 1 with t = x - y shared", 3, kNine,
        [](const Assignment& a) { return ipow(v(a, 0) - v(a, 1), 2) == v(a, 2) + 1; },
        [](Model& m, const Vars& x) {
            const Expr t = x[0] - x[1];
            m.add(t * t == x[2] + 1);
        },
        {300, 72});
    check_propagator(
        "t shared by two constraints: t = x % 3, t == y, t != z", 3, kSmall,
        [](const Assignment& a) { return py_mod(v(a, 0), 3) == v(a, 1) && v(a, 1) != v(a, 2); },
        [](Model& m, const Vars& x) {
            const Expr t = x[0] % 3;
            m.add(t == x[1]);
            m.add(t != x[2]);
        },
        {300, 73});
    check_propagator(
        "(t == z) | (t > x) with t = x * y shared", 3, kSmall,
        [](const Assignment& a) {
            const long long t = v(a, 0) * v(a, 1);
            return t == v(a, 2) || t > v(a, 0);
        },
        [](Model& m, const Vars& x) {
            const Expr t = x[0] * x[1];
            m.add((t == x[2]) | (t > x[0]));
        },
        {300, 74});
    check_propagator(
        "10 - max(x, y) * 2 == z + min(x, 3) - 4", 3, kNine,
        [](const Assignment& a) {
            return 10 - std::max(v(a, 0), v(a, 1)) * 2 == v(a, 2) + std::min(v(a, 0), 3LL) - 4;
        },
        [](Model& m, const Vars& x) { m.add(10 - max(x[0], x[1]) * 2 == x[2] + min(x[0], 3) - 4); },
        {300, 75});
    check_propagator(
        "x / 2 + y % 3 == abs(z) - 1", 3, kNine,
        [](const Assignment& a) { return py_div(v(a, 0), 2) + py_mod(v(a, 1), 3) == iabs(v(a, 2)) - 1; },
        [](Model& m, const Vars& x) { m.add(x[0] / 2 + x[1] % 3 == abs(x[2]) - 1); }, {300, 76});
    check_propagator(
        "constant terms: (2 + 3) * x == y - (7 - 10)", 2, kNine,
        [](const Assignment& a) { return 5 * v(a, 0) == v(a, 1) + 3; },
        [](Model& m, const Vars& x) { m.add((Expr(2) + 3) * x[0] == x[1] - (Expr(7) - 10)); }, {300, 77});
    check_propagator(
        "pow(abs(x), 2) - pow(y, 3) == z", 3, kSmall,
        [](const Assignment& a) { return ipow(iabs(v(a, 0)), 2) - ipow(v(a, 1), 3) == v(a, 2); },
        [](Model& m, const Vars& x) { m.add(pow(abs(x[0]), 2) - pow(x[1], 3) == x[2]); }, {300, 78});
}

TEST_CASE("propagators: one variable in several roles of one propagator") {
    check_propagator(
        "x + 1 == x", 1, kNine, [](const Assignment&) { return false; },
        [](Model& m, const Vars& x) { m.add(x[0] + 1 == x[0]); }, {100, 90});
    check_propagator(
        "x == x", 1, kNine, [](const Assignment&) { return true; },
        [](Model& m, const Vars& x) { m.add(x[0] == x[0]); }, {50, 91});
    check_propagator(
        "x != x", 1, kNine, [](const Assignment&) { return false; },
        [](Model& m, const Vars& x) { m.add(x[0] != x[0]); }, {50, 92});
    check_propagator(
        "x < x", 1, kNine, [](const Assignment&) { return false; },
        [](Model& m, const Vars& x) { m.add(x[0] < x[0]); }, {50, 93});
    check_propagator(
        "-x == x", 1, kNine, [](const Assignment& a) { return v(a, 0) == 0; },
        [](Model& m, const Vars& x) { m.add(-x[0] == x[0]); }, {100, 94});
    check_propagator(
        "x / x == y", 2, kNine, [](const Assignment& a) { return v(a, 0) != 0 && v(a, 1) == 1; },
        [](Model& m, const Vars& x) { m.add(x[0] / x[0] == x[1]); }, {200, 95});
    check_propagator(
        "x % x == y", 2, kNine, [](const Assignment& a) { return v(a, 0) != 0 && v(a, 1) == 0; },
        [](Model& m, const Vars& x) { m.add(x[0] % x[0] == x[1]); }, {200, 96});
    check_propagator(
        "x / y == x", 2, kNine,
        [](const Assignment& a) { return v(a, 1) != 0 && py_div(v(a, 0), v(a, 1)) == v(a, 0); },
        [](Model& m, const Vars& x) { m.add(x[0] / x[1] == x[0]); }, {200, 97});
    check_propagator(
        "divides(x, x)", 1, kNine, [](const Assignment& a) { return v(a, 0) != 0; },
        [](Model& m, const Vars& x) { m.add(divides(x[0], x[0])); }, {50, 98});
    check_propagator(
        "max(x, y) == y", 2, kNine, [](const Assignment& a) { return v(a, 0) <= v(a, 1); },
        [](Model& m, const Vars& x) { m.add(max(x[0], x[1]) == x[1]); }, {200, 99});
    check_propagator(
        "abs(x) == x", 1, kNine, [](const Assignment& a) { return v(a, 0) >= 0; },
        [](Model& m, const Vars& x) { m.add(abs(x[0]) == x[0]); }, {100, 100});
    check_propagator(
        "pow(x, 2) == x", 1, kNine, [](const Assignment& a) { return v(a, 0) == 0 || v(a, 0) == 1; },
        [](Model& m, const Vars& x) { m.add(pow(x[0], 2) == x[0]); }, {100, 101});
    check_propagator(
        "x * y == x + y", 2, kNine,
        [](const Assignment& a) { return v(a, 0) * v(a, 1) == v(a, 0) + v(a, 1); },
        [](Model& m, const Vars& x) { m.add(x[0] * x[1] == x[0] + x[1]); }, {200, 102});
}

// Terms whose domains carry congruences (multiples from products by constants and from
// divisibility), so that sums and products combine residues.
TEST_CASE("propagators: congruences carried through sums and products") {
    check_propagator(
        "2 * x + 3 * y == z", {kSmall, kSmall, interval(-8, 8)},
        [](const Assignment& a) { return 2 * v(a, 0) + 3 * v(a, 1) == v(a, 2); },
        [](Model& m, const Vars& x) { m.add(2 * x[0] + 3 * x[1] == x[2]); }, {300, 110});
    check_propagator(
        "4 * x - 6 * y == z", {kSmall, kSmall, interval(-8, 8)},
        [](const Assignment& a) { return 4 * v(a, 0) - 6 * v(a, 1) == v(a, 2); },
        [](Model& m, const Vars& x) { m.add(4 * x[0] - 6 * x[1] == x[2]); }, {300, 111});
    check_propagator(
        "divides(2, x), divides(3, y), x + y == z", {interval(-6, 6), interval(-6, 6), interval(-6, 6)},
        [](const Assignment& a) {
            return v(a, 0) % 2 == 0 && v(a, 1) % 3 == 0 && v(a, 0) + v(a, 1) == v(a, 2);
        },
        [](Model& m, const Vars& x) {
            m.add(divides(2, x[0]));
            m.add(divides(3, x[1]));
            m.add(x[0] + x[1] == x[2]);
        },
        {300, 112});
    check_propagator(
        "(2 * x) * (3 * y) == z", {kSmall, kSmall, interval(-12, 12)},
        [](const Assignment& a) { return 6 * v(a, 0) * v(a, 1) == v(a, 2); },
        [](Model& m, const Vars& x) { m.add((2 * x[0]) * (3 * x[1]) == x[2]); }, {300, 113});
    check_propagator(
        "x % 4 == 1, y % 6 == 3, x - y == z", {interval(-8, 8), interval(-8, 8), interval(-8, 8)},
        [](const Assignment& a) {
            return py_mod(v(a, 0), 4) == 1 && py_mod(v(a, 1), 6) == 3 && v(a, 0) - v(a, 1) == v(a, 2);
        },
        [](Model& m, const Vars& x) {
            m.add(x[0] % 4 == 1);
            m.add(x[1] % 6 == 3);
            m.add(x[0] - x[1] == x[2]);
        },
        {300, 114});
}

// Propagation never removes a solution on numbers beyond 64 bits: the small domains shifted by
// 2^70 (sums, differences, relations) or scaled by it (products).
TEST_CASE("propagators: big numbers around 2^70") {
    const Integer big = Integer(1) << 70;
    const auto shifted = [](const std::vector<Integer>& values, const Integer& offset) {
        std::vector<Integer> out;
        for (const Integer& w : values)
            out.push_back(w + offset);
        return out;
    };
    const auto scaled = [](const std::vector<Integer>& values, const Integer& factor) {
        std::vector<Integer> out;
        for (const Integer& w : values)
            out.push_back(w * factor);
        return out;
    };
    const auto vs = kSmall;
    check_propagator(
        "x + y == z around 2^70", {shifted(vs, big), shifted(vs, -big), shifted(interval(-6, 2), 0)},
        [](const Assignment& a) { return a[0] + a[1] == a[2]; },
        [](Model& m, const Vars& x) { m.add(x[0] + x[1] == x[2]); }, {150, 80});
    check_propagator(
        "x + y == z, all beyond 2^70",
        {shifted(vs, big), shifted(vs, big), shifted(interval(-4, 4), 2 * big)},
        [](const Assignment& a) { return a[0] + a[1] == a[2]; },
        [](Model& m, const Vars& x) { m.add(x[0] + x[1] == x[2]); }, {150, 81});
    check_propagator(
        "x - y == z around 2^70", {shifted(vs, big), shifted(vs, big), interval(-4, 4)},
        [](const Assignment& a) { return a[0] - a[1] == a[2]; },
        [](Model& m, const Vars& x) { m.add(x[0] - x[1] == x[2]); }, {150, 82});
    check_propagator(
        "x < y around 2^70", {shifted(vs, big), shifted(vs, big)},
        [](const Assignment& a) { return a[0] < a[1]; }, [](Model& m, const Vars& x) { m.add(x[0] < x[1]); },
        {150, 83});
    check_propagator(
        "x * y == z with x scaled by 2^70", {scaled(vs, big), vs, scaled(interval(-4, 4), big)},
        [](const Assignment& a) { return a[0] * a[1] == a[2]; },
        [](Model& m, const Vars& x) { m.add(x[0] * x[1] == x[2]); }, {150, 84});
    check_propagator(
        "x * y == z, both factors scaled by 2^70",
        {scaled(vs, big), scaled(vs, big), scaled(interval(-4, 4), big * big)},
        [](const Assignment& a) { return a[0] * a[1] == a[2]; },
        [](Model& m, const Vars& x) { m.add(x[0] * x[1] == x[2]); }, {150, 85});
    check_propagator(
        "x / y == z with x around 2^70", {shifted(vs, big), {-3, -2, -1, 1, 2, 3}, shifted(vs, big / 2)},
        [&](const Assignment& a) { return floor_div(a[0], a[1]) == a[2]; },
        [](Model& m, const Vars& x) { m.add(x[0] / x[1] == x[2]); }, {150, 86});
    check_propagator(
        "x % y == z with x around 2^70", {shifted(vs, big), {-3, -2, 2, 3}, interval(-2, 2)},
        [&](const Assignment& a) { return a[1] != 0 && a[0] - a[1] * floor_div(a[0], a[1]) == a[2]; },
        [](Model& m, const Vars& x) { m.add(x[0] % x[1] == x[2]); }, {150, 87});
    check_propagator(
        "divides(x, y) with y around 2^70", {{-3, -2, -1, 1, 2, 3, 5, 6}, shifted(interval(-4, 4), big)},
        [&](const Assignment& a) { return a[0] != 0 && a[1] % a[0] == 0; },
        [](Model& m, const Vars& x) { m.add(divides(x[0], x[1])); }, {150, 88});
}

// Exactness on huge ranges through the engine: no value is enumerated.
TEST_CASE("propagators: x % 16 == 0 on [1, 2^40] propagates to a congruence") {
    const Integer top = Integer(1) << 40;
    Model m;
    const Var x = m.var("x", 1, top);
    m.add(x % 16 == 0);
    auto compiled = engine::compile(m);
    REQUIRE_FALSE(compiled->failed);
    REQUIRE(compiled->store.propagate());
    const Domain& d = compiled->store.dom(x.index());
    CHECK(d.size() == (Integer(1) << 36));
    CHECK(d.min() == 16);
    CHECK(d.max() == top);
    CHECK(d.contains(top - 16));
    CHECK_FALSE(d.contains(top - 8));
    m.prefer(x, Prefer::Max);
    const Result r = solve(m);
    REQUIRE(r.solutions.size() == 1);
    CHECK(r.solutions[0][x] == top);
}

// The smallest inputs of the defects the harness found, one assertion each.
TEST_CASE("propagators: defects found by the harness, minimal") {
    SUBCASE("x - x == y with x in {-2, 0, 2} and y = 2 has no solution") {
        Model m;
        const Var x = m.var("x", std::vector<Integer>{-2, 0, 2});
        const Var y = m.var("y", 2, 2);
        m.add(x - x == y);
        const Result r = solve_all(m);
        CHECK(r.solutions.empty());
        CHECK(r.status == Status::Unsatisfiable);
    }
    SUBCASE("2 * x == x with x in {1, 2, 4} has no solution") {
        Model m;
        const Var x = m.var("x", std::vector<Integer>{1, 2, 4});
        m.add(2 * x == x);
        const Result r = solve_all(m);
        CHECK(r.solutions.empty());
        CHECK(r.status == Status::Unsatisfiable);
    }
    SUBCASE("x + 1 == x with x in {0, 1, 2} has no solution") {
        Model m;
        const Var x = m.var("x", 0, 2);
        m.add(x + 1 == x);
        const Result r = solve_all(m);
        CHECK(r.solutions.empty());
        CHECK(r.status == Status::Unsatisfiable);
    }
    SUBCASE("divides(x, y) | (x == z) with x = 0, z = 0 is false (issue 24: the divisor must not be 0)") {
        Model m;
        const Var x = m.var("x", 0, 0);
        const Var y = m.var("y", 1, 1);
        const Var z = m.var("z", 0, 0);
        const Constraint c = divides(x, y) | (x == z);
        CHECK_FALSE(satisfied(c, {0, 1, 0})); // the documented meaning
        m.add(c);
        Result r;
        CHECK_NOTHROW(r = solve(m));
        CHECK(r.solutions.empty());
        CHECK(r.status == Status::Unsatisfiable);
    }
}
