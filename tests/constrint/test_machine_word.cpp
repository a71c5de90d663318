// The machine-word fast path: its checked arithmetic against Integer arithmetic at the 64-bit
// boundaries, and the propagators that use it through the Gecode-style harness on small domains
// shifted to those boundaries, where some runs stay in words and others must fall back to Integers.
#include "propagator_harness.hpp"

#include "machine_word.hpp"
#include "propagators/linear.hpp"
#include "propagators/reified.hpp"
#include "propagators/relations.hpp"

#include <string>
#include <vector>

using namespace constrint;
using namespace constrint::engine;
using constrint::testing::Assignment;
using constrint::testing::check_native_propagator;

namespace {

const Integer kTwo62 = Integer(1) << 62;
const Integer kWordMax = (Integer(1) << 63) - 1; // 2^63 - 1
const Integer kWordMin = -(Integer(1) << 63);    // -2^63

bool fits_word(const Integer& v) {
    return v >= kWordMin && v <= kWordMax;
}

// Values at and next to every boundary a word operation can cross, and a few beyond 64 bits.
std::vector<Integer> boundary_values() {
    std::vector<Integer> values;
    for (const Integer& magnitude : std::initializer_list<Integer>{
             Integer(0), Integer(1), Integer(2), Integer(3), Integer(7), Integer(1) << 31,
             (Integer(1) << 32) + 1, kTwo62 - 1, kTwo62, kTwo62 + 1, kWordMax - 1, kWordMax, kWordMax + 1,
             kWordMax + 2, Integer(1) << 64, Integer(1) << 100}) {
        values.push_back(magnitude);
        values.push_back(-magnitude); // -0 included: it must read as 0
    }
    return values;
}

// `count` consecutive values from `first`.
std::vector<Integer> run_of(const Integer& first, int count) {
    std::vector<Integer> values;
    for (int i = 0; i < count; ++i)
        values.push_back(first + i);
    return values;
}

} // namespace

TEST_CASE("machine word: read_word takes exactly the values in [-2^63, 2^63 - 1]") {
    for (const Integer& v : boundary_values()) {
        Word w = 0;
        const bool read = read_word(v, w);
        CHECK_MESSAGE(read == fits_word(v), v);
        if (read) CHECK_MESSAGE(Integer(w) == v, v);
    }
}

TEST_CASE("machine word: write_word stores every word into an Integer of any size and sign") {
    for (const Integer& before : boundary_values()) {
        for (const Integer& v : boundary_values()) {
            Word w = 0;
            if (!read_word(v, w)) continue;
            Integer target = before;
            write_word(target, w);
            const std::string what = to_string(before) + " <- " + to_string(v);
            CHECK_MESSAGE(target == v, what);
            CHECK_MESSAGE(target.sign() == (w > 0) - (w < 0), what);
            CHECK_MESSAGE(to_string(target) == to_string(v), what);
        }
    }
}

TEST_CASE("machine word: +, -, * and floor/ceil division answer false exactly when the result does not fit") {
    std::vector<Word> words;
    for (const Integer& v : boundary_values()) {
        Word w = 0;
        if (read_word(v, w)) words.push_back(w);
    }
    REQUIRE(words.size() == 25); // 12 magnitudes up to 2^63 - 1, both signs (0 twice, as -0), and -2^63
    for (Word a : words) {
        for (Word b : words) {
            const Integer x(a), y(b);
            Word out = 0;
            const auto check = [&](const char* op, bool done, const Integer& exact) {
                CHECK_MESSAGE(done == fits_word(exact), x << " " << op << " " << y);
                if (done) CHECK_MESSAGE(Integer(out) == exact, x << " " << op << " " << y);
            };
            check("+", add_word(a, b, out), x + y);
            check("-", subtract_word(a, b, out), x - y);
            check("*", multiply_word(a, b, out), x * y);
            if (b != 0) {
                check("floor/", floor_div_word(a, b, out), floor_div(x, y));
                check("ceil/", ceil_div_word(a, b, out), ceil_div(x, y));
            }
        }
    }
}

namespace {

// x_view + offset <= y_view over the domains of x0 and x1 (views of store variables 0 and 1, or
// constants), checked with exact Integer arithmetic.
void check_less_equal(const std::string& name, const std::vector<Integer>& x_values,
                      const std::vector<Integer>& y_values, View x, View y, const Integer& offset) {
    const auto at = [](const View& view, const Assignment& a) {
        return view.constant() ? view.offset : Integer(view.scale * a[view.var] + view.offset);
    };
    check_native_propagator(
        name, {x_values, y_values}, [=](const Assignment& a) { return at(x, a) + offset <= at(y, a); },
        [=](Store& s, const std::vector<VarId>&) {
            s.add_propagator(std::make_unique<LessEqual>(x, y, offset));
        });
}

} // namespace

TEST_CASE("machine word: x + c <= y on domains at the 64-bit boundaries, word and Integer paths") {
    // Every bound and step fits a word: the word path decides every run.
    check_less_equal("x <= y below 2^63 - 1", run_of(kWordMax - 4, 5), run_of(kWordMax - 4, 5), View{0, 1, 0},
                     View{1, 1, 0}, 0);
    check_less_equal("x <= y at -2^63", run_of(kWordMin, 5), run_of(kWordMin, 5), View{0, 1, 0},
                     View{1, 1, 0}, 0);
    check_less_equal("x + 1 <= y around 2^62", run_of(kTwo62 - 2, 5), run_of(kTwo62 - 2, 5), View{0, 1, 0},
                     View{1, 1, 0}, 1);
    // x + 2 passes 2^63 - 1 when x is at the top, x - 3 passes -2^63 at the bottom: those runs
    // leave the word path for the Integer one.
    check_less_equal("x + 2 <= y at 2^63 - 1", run_of(kWordMax - 4, 5), run_of(kWordMax - 4, 5),
                     View{0, 1, 0}, View{1, 1, 0}, 2);
    check_less_equal("x <= y - 3 at -2^63", run_of(kWordMin, 5), run_of(kWordMin, 5), View{0, 1, 0},
                     View{1, 1, 3}, 0);
    check_less_equal("y <= x - 3 at -2^63, the offset on the left", run_of(kWordMin, 5), run_of(kWordMin, 5),
                     View{1, 1, 0}, View{0, 1, 0}, 3);
    // Scaled views: 2x overflows from 2^62 on, -x at -2^63.
    check_less_equal("2x <= y + 1 around 2^62", run_of(kTwo62 - 2, 5), run_of(kWordMax - 4, 5), View{0, 2, 0},
                     View{1, 1, 1}, 0);
    check_less_equal("-x <= -y at -2^63", run_of(kWordMin, 5), run_of(kWordMin, 5), View{0, -1, 0},
                     View{1, -1, 0}, 0);
    check_less_equal("3x - 1 <= -2y, scaled views within words", run_of((Integer(1) << 61) / 3 * 2 - 2, 5),
                     run_of(-(Integer(1) << 61) - 2, 5), View{0, 3, -1}, View{1, -2, 0}, 0);
    // A scale beyond 64 bits or values beyond 64 bits: the Integer path only.
    check_less_equal("2^64 x <= y", run_of(-2, 5), run_of(-(Integer(1) << 65), 5),
                     View{0, Integer(1) << 64, 0}, View{1, 1, 0}, 0);
    check_less_equal("x <= y around 2^64", run_of((Integer(1) << 64) - 2, 5),
                     run_of((Integer(1) << 64) - 3, 5), View{0, 1, 0}, View{1, 1, 0}, 0);
    // The product of a bound and the scale passes 2^63 for some values only.
    check_less_equal("2^40 x <= y, x around 2^23", run_of((Integer(1) << 23) - 2, 5), run_of(kWordMax - 4, 5),
                     View{0, Integer(1) << 40, 0}, View{1, 1, 0}, 0);
    // A constant side, and an offset of -2^63 (it fits) or beyond a word.
    check_less_equal("x + 1 <= 2^63 - 1", run_of(kWordMax - 3, 5), {0}, View{0, 1, 0}, View{-1, 1, kWordMax},
                     1);
    check_less_equal("x - 2^63 <= y", run_of(-2, 5), run_of(kWordMin, 5), View{0, 1, 0}, View{1, 1, 0},
                     kWordMin);
    check_less_equal("x + 2^64 <= y", run_of(-2, 5), run_of((Integer(1) << 64) - 3, 5), View{0, 1, 0},
                     View{1, 1, 0}, Integer(1) << 64);
}

namespace {

// sum(coefficients[i] * x_i) relation constant, with x_i over domains[i], checked with exact Integers.
void check_linear(const std::string& name, const std::vector<std::vector<Integer>>& domains,
                  const std::vector<Integer>& coefficients, LinearRelation relation,
                  const Integer& constant) {
    check_native_propagator(
        name, domains,
        [=](const Assignment& a) {
            Integer sum = 0;
            for (std::size_t i = 0; i < coefficients.size(); ++i)
                sum += coefficients[i] * a[i];
            return relation == LinearRelation::Eq   ? sum == constant
                   : relation == LinearRelation::Le ? sum <= constant
                                                    : sum != constant;
        },
        [=](Store& s, const std::vector<VarId>& x) {
            std::vector<LinearTerm> terms;
            for (std::size_t i = 0; i < coefficients.size(); ++i)
                terms.push_back({coefficients[i], x[i]});
            s.add_propagator(std::make_unique<Linear>(terms, relation, constant));
        });
}

} // namespace

TEST_CASE("machine word: linear sums on domains at the 64-bit boundaries, word and Integer paths") {
    const auto Eq = LinearRelation::Eq;
    const auto Le = LinearRelation::Le;
    // Within words throughout.
    check_linear("x - y == 0 below 2^63 - 1", {run_of(kWordMax - 4, 5), run_of(kWordMax - 4, 5)}, {1, -1}, Eq,
                 0);
    check_linear("x - y + z <= 2^62 around 2^62", {run_of(kTwo62 - 2, 5), run_of(-2, 5), run_of(-2, 5)},
                 {1, -1, 1}, Le, kTwo62);
    // The sum passes 2^63 - 1 (or -2^63) for some bounds only: those runs go to the Integer path.
    check_linear("x + y == -2^63 around -2^62", {run_of(-kTwo62 - 2, 5), run_of(-kTwo62 - 2, 5)}, {1, 1}, Eq,
                 kWordMin);
    check_linear("x + y == 2^63 - 1 around 2^62", {run_of(kTwo62 - 2, 5), run_of(kTwo62 - 2, 5)}, {1, 1}, Eq,
                 kWordMax);
    check_linear("x + y + z <= 2^63 - 1 around 2^62",
                 {run_of(kTwo62 - 2, 5), run_of(kTwo62 - 2, 5), run_of(-2, 5)}, {1, 1, 1}, Le, kWordMax);
    check_linear("-x - y == 2^63 - 2 around -2^62", {run_of(-kTwo62 - 2, 5), run_of(-kTwo62 + 1, 5)},
                 {-1, -1}, Eq, kWordMax - 1);
    check_linear("x - y <= -2^63 + 1 at the extremes", {run_of(kWordMin, 5), run_of(kWordMax - 4, 5)},
                 {1, -1}, Le, kWordMin + 1);
    // Three terms of coefficient 1 or -1 (the unrolled path): within words, a sum passing 2^63 - 1, and
    // -y for y = -2^63, which does not fit.
    check_linear("-x - y + z == 0 around 2^62", {run_of(kTwo62 - 2, 5), run_of(-2, 5), run_of(kTwo62 - 2, 5)},
                 {-1, -1, 1}, Eq, 0);
    check_linear("x + y + z == 2^63 - 1 around 2^62",
                 {run_of(kTwo62 - 2, 5), run_of(kTwo62 - 2, 5), run_of(-2, 5)}, {1, 1, 1}, Eq, kWordMax);
    check_linear("x - y - z == 0, y at -2^63", {run_of(kWordMin, 5), run_of(kWordMin, 5), run_of(-2, 5)},
                 {1, -1, -1}, Eq, 0);
    // A product passes 64 bits: 2^32 x from x = 2^31 on, 3x from x = 2^63 / 3.
    check_linear("2^32 x - y == 0, x around 2^31",
                 {run_of((Integer(1) << 31) - 2, 5), run_of((Integer(1) << 63) - (Integer(1) << 32) - 2, 5)},
                 {Integer(1) << 32, -1}, Eq, 0);
    check_linear("3x + 2y <= 2^63 - 1, x around 2^63 / 3", {run_of(kWordMax / 3 - 2, 5), run_of(-2, 5)},
                 {3, 2}, Le, kWordMax);
    check_linear("-7x + 2y == 5 at -2^63 / 7", {run_of(kWordMin / 7 - 2, 5), run_of(-2, 5)}, {-7, 2}, Eq, 5);
    // A coefficient, a constant or values beyond 64 bits: the Integer path only.
    check_linear("2^64 x - y == 0", {run_of(-2, 5), run_of(-(Integer(1) << 65), 5)}, {Integer(1) << 64, -1},
                 Eq, 0);
    check_linear("x + y == 2^64", {run_of(kWordMax - 2, 5), run_of(kWordMax - 2, 5)}, {1, 1}, Eq,
                 Integer(1) << 64);
    check_linear("x - y <= 1 around 2^64",
                 {run_of((Integer(1) << 64) - 2, 5), run_of((Integer(1) << 64) - 3, 5)}, {1, -1}, Le, 1);
}

TEST_CASE("machine word: b <-> x + c == y + d (Equal's entailment) at the 64-bit boundaries") {
    // Equal's entailment walks both interval lists in words when the views are offsets of variables;
    // the harness's random sub-domains give the lists holes. Offsets that push a bound past a word
    // send a run to the Integer path (the domains copied and intersected).
    const auto check = [](const std::string& name, const std::vector<Integer>& xs,
                          const std::vector<Integer>& ys, const Integer& x_offset, const Integer& y_offset) {
        check_native_propagator(
            name, {{0, 1}, xs, ys},
            [=](const Assignment& a) { return (a[0] == 1) == (a[1] + x_offset == a[2] + y_offset); },
            [=](Store& s, const std::vector<VarId>& x) {
                const View left{x[1], 1, x_offset}, right{x[2], 1, y_offset};
                s.add_propagator(std::make_unique<Reified>(x[0], std::make_unique<Equal>(left, right),
                                                           std::make_unique<NotEqual>(left, right),
                                                           Reified::Mode::Equivalence));
            });
    };
    check("b <-> x == y below 2^63 - 1", run_of(kWordMax - 6, 7), run_of(kWordMax - 6, 7), 0, 0);
    check("b <-> x + 3 == y at -2^63", run_of(kWordMin, 7), run_of(kWordMin, 7), 3, 0);
    check("b <-> x + 3 == y at 2^63 - 1 (x + 3 passes it)", run_of(kWordMax - 6, 7), run_of(kWordMax - 6, 7),
          3, 0);
    check("b <-> x == y - 4 at -2^63 (y - 4 passes it)", run_of(kWordMin, 7), run_of(kWordMin, 7), 0, -4);
    check("b <-> x + 2^63 - 1 == y - 2^63", run_of(-3, 7), run_of(kWordMax - 6, 7), kWordMax, kWordMin);
    check("b <-> x == y around 2^64", run_of((Integer(1) << 64) - 3, 7), run_of((Integer(1) << 64) - 4, 7), 0,
          0);
    check("b <-> x + 2^64 == y", run_of(-3, 7), run_of((Integer(1) << 64) - 4, 7), Integer(1) << 64, 0);
}

TEST_CASE("machine word: x + c == y + d on domains with holes (Equal's gap walk) at the 64-bit boundaries") {
    // Two offset views with holes narrow each other gap by gap in words; the harness's random
    // sub-domains give the holes, and the propagation must leave exactly the supported values.
    // Offsets that push a bound past a word send a run to the Integer path.
    const auto check = [](const std::string& name, const std::vector<Integer>& xs,
                          const std::vector<Integer>& ys, const Integer& x_offset, const Integer& y_offset) {
        check_native_propagator(
            name, {xs, ys}, [=](const Assignment& a) { return a[0] + x_offset == a[1] + y_offset; },
            [=](Store& s, const std::vector<VarId>& x) {
                s.add_propagator(std::make_unique<Equal>(View{x[0], 1, x_offset}, View{x[1], 1, y_offset}));
            },
            {300, 31, true});
    };
    check("x == y + 2 on small domains", run_of(-5, 9), run_of(-7, 9), 0, 2);
    check("x == y below 2^63 - 1", run_of(kWordMax - 6, 7), run_of(kWordMax - 6, 7), 0, 0);
    check("x + 3 == y at -2^63", run_of(kWordMin, 7), run_of(kWordMin, 7), 3, 0);
    check("x + 3 == y at 2^63 - 1 (x + 3 passes it)", run_of(kWordMax - 6, 7), run_of(kWordMax - 6, 7), 3, 0);
    check("x == y - 4 at -2^63 (y - 4 passes it)", run_of(kWordMin, 7), run_of(kWordMin, 7), 0, -4);
    check("x + 2^63 - 1 == y - 2^63", run_of(-3, 7), run_of(kWordMax - 6, 7), kWordMax, kWordMin);
    check("x == y around 2^64", run_of((Integer(1) << 64) - 3, 7), run_of((Integer(1) << 64) - 4, 7), 0, 0);
}
