// Domain as a set: every operation on random small domains (value lists, ranges, congruences and
// what narrowing makes of them) is compared with a std::set model of the same values, and the
// "changed" answer with whether the model changed. Then huge domains, where no model can list
// the values.
#include <constrint/domain.hpp>
#include <doctest/doctest.h>

#include <cstdint>
#include <limits>
#include <random>
#include <set>
#include <string>
#include <vector>

using constrint::Domain;
using constrint::Integer;

namespace {

using Values = std::set<long long>;

// Values outside this window never occur: domains start in [-12, 12], an image moves them at most
// to [-75, 75].
constexpr long long kWindow = 90;

// Reproducible on every standard library (the distributions are not).
struct Random {
    std::mt19937_64 engine;
    explicit Random(std::uint64_t seed) : engine(seed) {}
    long long between(long long lo, long long hi) {
        return lo + static_cast<long long>(engine() % static_cast<std::uint64_t>(hi - lo + 1));
    }
    bool chance(int percent) { return between(1, 100) <= percent; }
};

long long mod_floor(long long a, long long m) { // plain C++: the remainder with the sign of m
    const long long r = a % m;
    return (r != 0 && (r < 0) != (m < 0)) ? r + m : r;
}

std::string show(const Values& values) {
    std::string s = "{";
    for (long long v : values)
        s += (s.size() > 1 ? ", " : "") + std::to_string(v);
    return s + "}";
}

std::vector<Integer> as_list(const Values& values) {
    return {values.begin(), values.end()};
}

// d answers membership, next_at_least and prev_at_most at v as the set `expected` does.
template <class Set, class Value>
void check_queries_at(const Domain& d, const Set& expected, const Value& v) {
    CHECK(d.contains(v) == (expected.count(v) == 1));
    const auto up = expected.lower_bound(v);
    const auto next = d.next_at_least(v);
    CHECK(next.has_value() == (up != expected.end()));
    if (next && up != expected.end()) CHECK(*next == *up);
    const auto down = expected.upper_bound(v);
    const auto prev = d.prev_at_most(v);
    CHECK(prev.has_value() == (down != expected.begin()));
    if (prev && down != expected.begin()) CHECK(*prev == *std::prev(down));
}

// Domain d holds exactly `expected`, answers every query as the set does, and is in canonical form.
void check_same(const Domain& d, const Values& expected) {
    INFO("domain ", d.to_string(), ", expected ", show(expected));
    REQUIRE(d.empty() == expected.empty());
    CHECK(d.size() == expected.size());
    CHECK(d.fixed() == (expected.size() == 1));
    if (!expected.empty()) {
        CHECK(d.min() == *expected.begin());
        CHECK(d.max() == *expected.rbegin());
        if (d.fixed()) CHECK(d.value() == *expected.begin());
    }
    for (long long v = -kWindow; v <= kWindow; ++v) {
        CAPTURE(v);
        check_queries_at(d, expected, v);
    }
    // Canonical form: congruent interval bounds, sorted, a missing congruent value between
    // intervals, modulus 1 when fixed.
    const Integer& m = d.modulus();
    CHECK(m >= 1);
    CHECK(d.residue() >= 0);
    CHECK(d.residue() < m);
    if (d.fixed()) CHECK(m == 1);
    const auto& intervals = d.intervals();
    for (std::size_t i = 0; i < intervals.size(); ++i) {
        CHECK(intervals[i].lo <= intervals[i].hi);
        CHECK((intervals[i].lo - d.residue()) % m == 0);
        CHECK((intervals[i].hi - d.residue()) % m == 0);
        if (i > 0) CHECK(intervals[i].lo - intervals[i - 1].hi > m);
    }
    // Equality is set equality, whatever way the same set was built.
    CHECK(d == Domain::values(as_list(expected)));
    CHECK(Domain::values(as_list(expected)) == d);
}

struct Sample {
    Domain domain;
    Values values;
    std::string recipe; // how it was built, for failure messages
};

Values congruent_part(const Values& values, long long m, long long r) {
    Values out;
    for (long long v : values) {
        if (mod_floor(v - r, m) == 0) out.insert(v);
    }
    return out;
}

// One narrowing step on both the domain and its model, checking the step on the way.
void narrow(Sample& s, Random& rng) {
    const Values before = s.values;
    bool changed = false;
    switch (rng.between(0, 4)) {
    case 0: {
        const long long lo = rng.between(-14, 14);
        s.recipe += ".restrict_min(" + std::to_string(lo) + ")";
        changed = s.domain.restrict_min(lo);
        s.values.erase(s.values.begin(), s.values.lower_bound(lo));
        break;
    }
    case 1: {
        const long long hi = rng.between(-14, 14);
        s.recipe += ".restrict_max(" + std::to_string(hi) + ")";
        changed = s.domain.restrict_max(hi);
        s.values.erase(s.values.upper_bound(hi), s.values.end());
        break;
    }
    case 2: {
        const long long v = rng.between(-14, 14);
        s.recipe += ".remove(" + std::to_string(v) + ")";
        changed = s.domain.remove(v);
        s.values.erase(v);
        break;
    }
    case 3: {
        const long long lo = rng.between(-14, 14), hi = rng.between(-14, 14);
        s.recipe += ".remove_range(" + std::to_string(lo) + ", " + std::to_string(hi) + ")";
        changed = s.domain.remove_range(lo, hi);
        if (lo <= hi) s.values.erase(s.values.lower_bound(lo), s.values.upper_bound(hi));
        break;
    }
    default: {
        const long long m = rng.between(1, 6), r = rng.between(-8, 14);
        s.recipe += ".restrict_congruence(" + std::to_string(m) + ", " + std::to_string(r) + ")";
        changed = s.domain.restrict_congruence(m, r);
        s.values = congruent_part(s.values, m, r);
        break;
    }
    }
    INFO("recipe ", s.recipe, " from ", show(before));
    CHECK(changed == (before != s.values));
    check_same(s.domain, s.values);
}

Sample random_sample(Random& rng) {
    Sample s;
    switch (rng.between(0, 4)) {
    case 0: { // a value list of random density
        const int percent = static_cast<int>(rng.between(5, 95));
        for (long long v = -12; v <= 12; ++v) {
            if (rng.chance(percent)) s.values.insert(v);
        }
        s.domain = Domain::values(as_list(s.values));
        s.recipe = "values" + show(s.values);
        break;
    }
    case 1:
    case 2: { // a range, possibly empty, possibly under a congruence
        const long long lo = rng.between(-12, 12), hi = rng.between(-12, 12);
        s.domain = Domain::range(lo, hi);
        for (long long v = lo; v <= hi; ++v)
            s.values.insert(v);
        s.recipe = "range(" + std::to_string(lo) + ", " + std::to_string(hi) + ")";
        break;
    }
    case 3: { // a congruence on a range
        const long long lo = rng.between(-12, 4), hi = rng.between(lo, 12);
        const long long m = rng.between(1, 6), r = rng.between(-6, 12);
        s.domain = Domain::range(lo, hi);
        s.domain.restrict_congruence(m, r);
        for (long long v = lo; v <= hi; ++v)
            s.values.insert(v);
        s.values = congruent_part(s.values, m, r);
        s.recipe = "range(" + std::to_string(lo) + ", " + std::to_string(hi) + ").restrict_congruence(" +
                   std::to_string(m) + ", " + std::to_string(r) + ")";
        break;
    }
    default:
        s.recipe = "Domain()";
        break; // empty
    }
    {
        INFO("recipe ", s.recipe);
        check_same(s.domain, s.values);
    }
    const long long steps = rng.between(0, 3);
    for (long long i = 0; i < steps; ++i)
        narrow(s, rng);
    return s;
}

} // namespace

TEST_CASE("domain: narrowing steps agree with a set model and report exactly whether they changed it") {
    Random rng(20240611);
    int steps = 0;
    for (int trial = 0; trial < 1500; ++trial) {
        Sample s = random_sample(rng);
        for (int i = 0; i < 6; ++i, ++steps)
            narrow(s, rng);
    }
    MESSAGE("narrowing steps checked: ", steps);
}

TEST_CASE("domain: intersect agrees with set intersection and reports changes") {
    Random rng(77);
    for (int trial = 0; trial < 3000; ++trial) {
        const Sample a = random_sample(rng), b = random_sample(rng);
        INFO("a = ", a.recipe, ", b = ", b.recipe);
        Values common;
        for (long long v : a.values) {
            if (b.values.count(v)) common.insert(v);
        }
        Domain d = a.domain;
        CHECK(d.intersect(b.domain) == (common != a.values));
        check_same(d, common);
        Domain self = a.domain;
        CHECK_FALSE(self.intersect(a.domain));
        check_same(self, a.values);
    }
}

TEST_CASE("domain: operator== is set equality") {
    Random rng(4242);
    int equal_pairs = 0;
    for (int trial = 0; trial < 4000; ++trial) {
        const Sample a = random_sample(rng), b = random_sample(rng);
        INFO("a = ", a.recipe, ", b = ", b.recipe);
        CHECK((a.domain == b.domain) == (a.values == b.values));
        CHECK((b.domain == a.domain) == (a.values == b.values));
        equal_pairs += a.values == b.values;
    }
    // The same set built in different ways: as a range, as a list, under a congruence.
    CHECK(Domain::range(0, 6).restrict_congruence(6, 0));
    Domain zero_six = Domain::range(0, 6);
    zero_six.restrict_congruence(6, 0);
    CHECK(zero_six == Domain::values({0, 6}));
    Domain evens = Domain::values({-4, -2, 0, 2, 4});
    Domain congruent = Domain::range(-5, 5);
    congruent.restrict_congruence(2, 0);
    CHECK(evens == congruent);
    CHECK(congruent == evens);
    Domain odd_threes = Domain::range(-9, 9);
    odd_threes.restrict_congruence(3, 0);
    odd_threes.restrict_congruence(2, 1); // {-9, -3, 3, 9}: mod 6 = 3
    CHECK(odd_threes == Domain::values({-9, -3, 3, 9}));
    CHECK_FALSE(odd_threes == Domain::values({-9, -3, 3}));
    CHECK(Domain() == Domain::range(1, 0));
    MESSAGE("random pairs that were equal sets: ", equal_pairs);
}

TEST_CASE("domain: images (shifted, negated, scaled, divided_exactly) are exact") {
    Random rng(99);
    for (int trial = 0; trial < 2000; ++trial) {
        const Sample s = random_sample(rng);
        INFO("domain ", s.recipe);
        const long long offset = rng.between(-15, 15);
        long long factor = rng.between(-5, 4);
        factor += factor >= 0; // never 0
        long long divisor = rng.between(-6, 5);
        divisor += divisor >= 0;
        CAPTURE(offset);
        CAPTURE(factor);
        CAPTURE(divisor);
        Values shifted, negated, scaled, divided;
        for (long long v : s.values) {
            shifted.insert(v + offset);
            negated.insert(-v);
            scaled.insert(v * factor);
            if (v % divisor == 0) divided.insert(v / divisor);
        }
        check_same(s.domain.shifted(offset), shifted);
        check_same(s.domain.negated(), negated);
        check_same(s.domain.scaled(factor), scaled);
        check_same(s.domain.divided_exactly(divisor), divided);
        // Images of images: the canonical form survives composition.
        Values round_trip;
        for (long long v : scaled)
            round_trip.insert(-(v + offset));
        check_same(s.domain.scaled(factor).shifted(offset).negated(), round_trip);
        check_same(s.domain.scaled(factor).divided_exactly(factor), s.values);
    }
}

TEST_CASE("domain: x % 16 == 0 on [1, 2^40] is exact without enumeration") {
    const Integer top = Integer(1) << 40;
    Domain d = Domain::range(1, top);
    CHECK(d.restrict_congruence(16, 0));
    CHECK(d.size() == (Integer(1) << 36));
    CHECK(d.intervals().size() == 1);
    CHECK(d.min() == 16);
    CHECK(d.max() == top); // 2^40 itself is a multiple of 16
    CHECK(d.modulus() == 16);
    CHECK(d.residue() == 0);
    CHECK(d.contains(16));
    CHECK(d.contains(top));
    CHECK(d.contains(top - 16));
    CHECK_FALSE(d.contains(0));
    CHECK_FALSE(d.contains(top - 8));
    CHECK_FALSE(d.contains(top + 16));
    CHECK(d.next_at_least(-5) == Integer(16));
    CHECK(d.next_at_least(17) == Integer(32));
    CHECK(d.next_at_least(top - 15) == top);
    CHECK_FALSE(d.next_at_least(top + 1).has_value());
    CHECK(d.prev_at_most(top - 1) == top - 16);
    CHECK(d.prev_at_most(31) == Integer(16));
    CHECK_FALSE(d.prev_at_most(15).has_value());
    // Narrowing keeps it symbolic: removing one value splits one interval, sizes stay exact.
    CHECK(d.remove(Integer(1) << 39));
    CHECK(d.intervals().size() == 2);
    CHECK(d.size() == (Integer(1) << 36) - 1);
    CHECK_FALSE(d.remove((Integer(1) << 39) + 1)); // not a multiple of 16: was never there
    CHECK(d.restrict_congruence(3, 1));            // now 16 mod 48
    CHECK(d.modulus() == 48);
    CHECK(d.residue() == 16);
    CHECK(d.contains(16));
    CHECK_FALSE(d.contains(32));
    CHECK(d.next_at_least(17) == Integer(64));
}

TEST_CASE("domain: huge bounds beyond 2^64") {
    const Integer big = (Integer(1) << 70) + 3;
    SUBCASE("ranges, sizes, removal and bounds") {
        Domain d = Domain::range(-big, big);
        CHECK(d.size() == 2 * big + 1);
        CHECK(d.remove(0));
        CHECK(d.size() == 2 * big);
        CHECK(d.intervals().size() == 2);
        CHECK_FALSE(d.contains(0));
        CHECK(d.next_at_least(0) == Integer(1));
        CHECK(d.prev_at_most(0) == Integer(-1));
        CHECK(d.restrict_min(big - 1));
        CHECK(d.size() == 2);
        CHECK_FALSE(d.restrict_min(big - 2));
        CHECK(d.restrict_max(big - 1));
        CHECK(d.fixed());
        CHECK(d.value() == big - 1);
        CHECK(d == Domain::single(big - 1));
    }
    SUBCASE("congruences with moduli beyond 2^64 combine by Chinese remaindering") {
        const Integer m1 = (Integer(1) << 65) + 1,
                      m2 = (Integer(1) << 64) + 3; // coprime (odd, differ by 2^64 - 2)
        REQUIRE(constrint::gcd(m1, m2) == 1);
        Domain d = Domain::range(-(m1 * m2 * 4), m1 * m2 * 4);
        CHECK(d.restrict_congruence(m1, 5));
        CHECK(d.restrict_congruence(m2, 7));
        CHECK(d.modulus() == m1 * m2);
        CHECK(constrint::floor_mod(d.residue() - 5, m1) == 0);
        CHECK(constrint::floor_mod(d.residue() - 7, m2) == 0);
        CHECK(d.size() == 8);
        const Integer first = *d.next_at_least(-(m1 * m2 * 4));
        CHECK(constrint::floor_mod(first - 5, m1) == 0);
        CHECK(constrint::floor_mod(first - 7, m2) == 0);
        CHECK(first - m1 * m2 < -(m1 * m2 * 4));
        // An incompatible congruence empties it.
        Domain even = Domain::range(0, big);
        even.restrict_congruence(Integer(1) << 66, 2);
        CHECK(even.restrict_congruence(Integer(1) << 65, 1));
        CHECK(even.empty());
    }
    SUBCASE("images far beyond 2^64") {
        Domain d = Domain::values({-2, 0, 3});
        const Domain scaled = d.scaled(big);
        CHECK(scaled.size() == 3);
        CHECK(scaled.contains(-2 * big));
        CHECK(scaled.contains(3 * big));
        CHECK_FALSE(scaled.contains(big));
        CHECK(scaled.divided_exactly(big) == d);
        CHECK(scaled.divided_exactly(-big) == d.negated());
        const Domain shifted = scaled.shifted(big * big);
        CHECK(shifted.min() == big * big - 2 * big);
        CHECK(shifted.max() == big * big + 3 * big);
        CHECK(shifted.shifted(-big * big) == scaled);
        Domain range = Domain::range(big, 3 * big);
        const Domain multiples = range.divided_exactly(big);
        CHECK(multiples == Domain::values({1, 2, 3}));
        Domain wide = Domain::range(-(Integer(1) << 100), Integer(1) << 100);
        CHECK(wide.intersect(Domain::range(Integer(1) << 99, Integer(1) << 101)));
        CHECK(wide.size() == (Integer(1) << 99) + 1);
        CHECK(wide.remove_range(Integer(1) << 99, (Integer(1) << 100) - 1));
        CHECK(wide.fixed());
        CHECK(wide.value() == Integer(1) << 100);
    }
}

TEST_CASE("domain: restrict_congruence that excludes no value reports no change") {
    Domain evens = Domain::values({0, 2}); // every value is 0 mod 2 already
    CHECK_FALSE(evens.restrict_congruence(2, 0));
    CHECK(evens == Domain::values({0, 2}));
    Domain ones = Domain::values({1, 11}); // both are 1 mod 10
    CHECK_FALSE(ones.restrict_congruence(5, 1));
    CHECK_FALSE(ones.restrict_congruence(2, 1));
}

TEST_CASE("domain: size at the 64-bit boundaries (word count, then Integer when it does not fit)") {
    const Integer top = std::numeric_limits<std::int64_t>::max(),
                  bottom = std::numeric_limits<std::int64_t>::min();
    CHECK(Domain::range(bottom, top).size() == Integer(1) << 64); // the span overflows
    CHECK(Domain::range(0, top).size() == Integer(1) << 63);      // the span fits, the +1 does not
    CHECK(Domain::range(1, top).size() == top);                   // the largest word count
    CHECK(Domain::range(-(Integer(1) << 62), Integer(1) << 62).size() == (Integer(1) << 63) + 1);
    CHECK(Domain::range(bottom, bottom).size() == 1);
    CHECK(Domain::range(top, top + 1).size() == 2); // one bound beyond the words
    Domain even = Domain::range(bottom, top);
    even.restrict_congruence(2, 0);
    CHECK(even.size() == Integer(1) << 63);
    Domain split = Domain::range(bottom, top);
    split.remove(0); // two intervals of 2^63 and 2^63 - 1 values: the total overflows
    CHECK(split.size() == (Integer(1) << 64) - 1);
    Domain thirds = Domain::range(0, Integer(3) << 61);
    thirds.restrict_congruence(Integer(1) << 61, 0); // {0, 2^61, 2^62, 3 * 2^61}
    CHECK(thirds.size() == 4);
}

TEST_CASE("domain: assign leaves exactly one value and no congruence, like single") {
    Domain d = Domain::values({-3, 1, 2, 3, 9, 40});
    d.assign(9);
    CHECK(d == Domain::single(9));
    CHECK(d.fixed());
    CHECK(d.value() == 9);
    Domain congruent = Domain::range(0, Integer(1) << 70);
    REQUIRE(congruent.restrict_congruence(16, 0));
    congruent.assign(Integer(1) << 68);
    CHECK(congruent == Domain::single(Integer(1) << 68));
    CHECK(congruent.modulus() == 1);
    CHECK(congruent.residue() == 0);
}

// remove, restrict_min and restrict_max store word bounds in place: next to 2^63 - 1 and -2^63 the
// neighbour of a word is not a word. Each result is compared with the domain built from its values.
TEST_CASE("domain: remove and bound narrowing next to 2^63 - 1 and -2^63 agree with the value lists") {
    const Integer top = (Integer(1) << 63) - 1, bottom = -(Integer(1) << 63);
    for (const Integer& centre : {top, bottom, Integer(0)}) {
        std::vector<Integer> values;
        for (int delta = -2; delta <= 2; ++delta)
            values.push_back(centre + delta);
        const Domain all = Domain::values(values);
        for (std::size_t i = 0; i < values.size(); ++i) {
            CAPTURE(constrint::to_string(values[i]));
            std::vector<Integer> others = values;
            others.erase(others.begin() + static_cast<std::ptrdiff_t>(i));
            Domain removed = all;
            CHECK(removed.remove(values[i]));
            CHECK(removed == Domain::values(others));
            CHECK(removed.to_string() == Domain::values(others).to_string());
            Domain raised = all, lowered = all;
            CHECK(raised.restrict_min(values[i]) == (i > 0));
            CHECK(raised == Domain::range(values[i], values.back()));
            CHECK(lowered.restrict_max(values[i]) == (i + 1 < values.size()));
            CHECK(lowered == Domain::range(values.front(), values[i]));
        }
    }
}

// A domain is held in words exactly when it has no congruence and its bounds fit 64 bits, and it
// switches both ways as it changes. Random narrowings of value lists near 2^62, 2^63 - 1, -2^63 and
// beyond a word (2^64, -2^64 - 3) are compared with a set of Integers, with the representation
// checked after every step, so that both representations and every switch between them are covered.
TEST_CASE("domain: word and Integer representations near the 64-bit boundaries agree with a set model") {
    using Set = std::set<Integer>;
    const Integer top = std::numeric_limits<std::int64_t>::max(),
                  bottom = std::numeric_limits<std::int64_t>::min();
    const std::vector<Integer> centres = {Integer(1) << 62,        top,       bottom, Integer(1) << 64,
                                          -(Integer(1) << 64) - 3, Integer(0)};
    const auto fits = [&](const Integer& v) { return bottom <= v && v <= top; };
    const auto check = [&](const Domain& d, const Set& expected, const std::vector<Integer>& probes) {
        INFO("domain ", d.to_string());
        REQUIRE(d.empty() == expected.empty());
        CHECK(d.size() == expected.size());
        CHECK(d.fixed() == (expected.size() == 1));
        CHECK(d.in_words() == (d.modulus() == 1 && (d.empty() || (fits(d.min()) && fits(d.max())))));
        if (!expected.empty()) {
            CHECK(d.min() == *expected.begin());
            CHECK(d.max() == *expected.rbegin());
        }
        for (const Integer& v : probes) {
            CAPTURE(constrint::to_string(v));
            check_queries_at(d, expected, v);
        }
        if (d.in_words()) { // the word intervals are the Integer ones
            const std::vector<constrint::Interval> integers = d.intervals();
            REQUIRE(integers.size() == d.word_intervals().size());
            for (std::size_t i = 0; i < integers.size(); ++i) {
                CHECK(integers[i].lo == d.word_intervals()[i].lo);
                CHECK(integers[i].hi == d.word_intervals()[i].hi);
            }
        }
        CHECK(d == Domain::values({expected.begin(), expected.end()}));
    };
    Random random(19);
    for (int trial = 0; trial < 400; ++trial) {
        // One or two windows of values around centres, with holes.
        Set values;
        std::vector<Integer> probes;
        for (int w = 0, windows = static_cast<int>(random.between(1, 2)); w < windows; ++w) {
            const Integer& centre = centres[static_cast<std::size_t>(random.between(0, 5))];
            for (int delta = -5; delta <= 5; ++delta) {
                probes.push_back(centre + delta);
                if (random.chance(70)) values.insert(centre + delta);
            }
        }
        if (values.empty()) continue;
        Domain d = Domain::values({values.begin(), values.end()});
        CAPTURE(trial);
        check(d, values, probes);
        for (int step = 0; step < 6 && !values.empty(); ++step) {
            const Integer& v = probes[static_cast<std::size_t>(
                random.between(0, static_cast<long long>(probes.size()) - 1))];
            const Integer& v2 = probes[static_cast<std::size_t>(
                random.between(0, static_cast<long long>(probes.size()) - 1))];
            const int op = static_cast<int>(random.between(0, 6));
            CAPTURE(step);
            CAPTURE(op);
            CAPTURE(constrint::to_string(v));
            Set next;
            bool changed = false;
            switch (op) {
            case 0:
                for (const Integer& x : values)
                    if (x >= v) next.insert(x);
                changed = d.restrict_min(v);
                break;
            case 1:
                for (const Integer& x : values)
                    if (x <= v) next.insert(x);
                changed = d.restrict_max(v);
                break;
            case 2:
                next = values;
                next.erase(v);
                changed = d.remove(v);
                break;
            case 3: {
                const Integer& lo = std::min(v, v2);
                const Integer& hi = std::max(v, v2);
                for (const Integer& x : values)
                    if (x < lo || x > hi) next.insert(x);
                changed = d.remove_range(lo, hi);
                break;
            }
            case 4: { // a congruence: the domain leaves the words unless it becomes fixed
                const long long m = random.between(2, 3), r = random.between(0, m - 1);
                for (const Integer& x : values)
                    if (constrint::floor_mod(x - r, m) == 0) next.insert(x);
                changed = d.restrict_congruence(m, r);
                break;
            }
            case 5: { // intersection with a window around v, held in words or not
                const Domain window = Domain::range(v - 3, v + 3);
                for (const Integer& x : values)
                    if (x >= v - 3 && x <= v + 3) next.insert(x);
                changed = d.intersect(window);
                break;
            }
            default:
                if (values.count(v) == 0) continue;
                next = {v};
                d.assign(v);
                changed = values.size() > 1;
                break;
            }
            CHECK(changed == (next != values));
            values = next;
            check(d, values, probes);
        }
    }
}

// The images leave and re-enter the words: shifting past 2^63 - 1, negating -2^63, scaling.
TEST_CASE("domain: images switch between word and Integer intervals at the 64-bit boundaries") {
    const Integer top = std::numeric_limits<std::int64_t>::max(),
                  bottom = std::numeric_limits<std::int64_t>::min();
    const Domain near_top = Domain::values({top - 4, top - 2, top});
    REQUIRE(near_top.in_words());
    const Domain past = near_top.shifted(1); // top + 1 is beyond a word
    CHECK_FALSE(past.in_words());
    CHECK(past == Domain::values({top - 3, top - 1, top + 1}));
    const Domain back = past.shifted(-1);
    CHECK(back.in_words());
    CHECK(back == near_top);
    const Domain at_bottom = Domain::values({bottom, bottom + 5});
    CHECK(at_bottom.in_words());
    const Domain negated = at_bottom.negated(); // -(-2^63) = 2^63 does not fit
    CHECK_FALSE(negated.in_words());
    CHECK(negated == Domain::values({-bottom, -bottom - 5}));
    const Domain doubled = Domain::values({1, 2}).scaled(Integer(1) << 62); // {2^62, 2^63}: a congruence
    CHECK_FALSE(doubled.in_words());
    CHECK(doubled.contains(Integer(1) << 63));
    Domain fixed_again = doubled;
    CHECK(fixed_again.restrict_max(top)); // {2^62}: fixed, no congruence, a word
    CHECK(fixed_again.in_words());
    CHECK(fixed_again == Domain::single(Integer(1) << 62));
    CHECK(Domain::values({2, 4, 6}).divided_exactly(2) == Domain::range(1, 3));
    CHECK(Domain::values({2, 4, 6}).divided_exactly(2).in_words());
}
