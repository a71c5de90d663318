// The propagators of the FlatZinc builtins (posted straight into the store, no model constraint)
// through the Gecode-style harness: every assignment decided, no solution ever removed.
#include "propagator_harness.hpp"

#include "propagators/all_different.hpp"
#include "propagators/arithmetic.hpp"
#include "propagators/cardinality_sums.hpp"
#include "propagators/clause.hpp"
#include "propagators/count.hpp"
#include "propagators/element.hpp"
#include "propagators/linear.hpp"
#include "propagators/reified.hpp"
#include "propagators/relations.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <set>

using namespace constrint;
using namespace constrint::engine;
using constrint::testing::Assignment;
using constrint::testing::check_native_propagator;
using constrint::testing::HarnessOptions;
using constrint::testing::interval;

namespace {

long long v(const Assignment& a, std::size_t i) {
    return static_cast<long long>(a[i]);
}

View view(VarId x) {
    return View{x, 1, 0};
}

const std::vector<Integer> kSmall = interval(-3, 3);
const std::vector<Integer> kBool = interval(0, 1);

// MiniZinc's div and mod truncate towards zero, as C++ does.
long long trunc_div(long long a, long long b) {
    return a / b;
}
long long trunc_mod(long long a, long long b) {
    return a % b;
}

} // namespace

TEST_CASE("native propagators: linear equality, inequality, disequality") {
    check_native_propagator(
        "2x - 3y + z == 1", 3, kSmall,
        [](const Assignment& a) { return 2 * v(a, 0) - 3 * v(a, 1) + v(a, 2) == 1; },
        [](Store& s, const std::vector<VarId>& x) {
            s.add_propagator(std::make_unique<Linear>(
                std::vector<LinearTerm>{{2, x[0]}, {-3, x[1]}, {1, x[2]}}, LinearRelation::Eq, Integer(1)));
        });
    check_native_propagator(
        "3x + 2y - z <= -2", 3, kSmall,
        [](const Assignment& a) { return 3 * v(a, 0) + 2 * v(a, 1) - v(a, 2) <= -2; },
        [](Store& s, const std::vector<VarId>& x) {
            s.add_propagator(std::make_unique<Linear>(
                std::vector<LinearTerm>{{3, x[0]}, {2, x[1]}, {-1, x[2]}}, LinearRelation::Le, Integer(-2)));
        },
        {300, 2});
    check_native_propagator(
        "x + 2y - z != 0", 3, kSmall,
        [](const Assignment& a) { return v(a, 0) + 2 * v(a, 1) - v(a, 2) != 0; },
        [](Store& s, const std::vector<VarId>& x) {
            s.add_propagator(std::make_unique<Linear>(
                std::vector<LinearTerm>{{1, x[0]}, {2, x[1]}, {-1, x[2]}}, LinearRelation::Ne, Integer(0)));
        },
        {300, 3});
    check_native_propagator(
        "x1 + ... + x5 == 2 (0/1)", 5, kBool,
        [](const Assignment& a) { return v(a, 0) + v(a, 1) + v(a, 2) + v(a, 3) + v(a, 4) == 2; },
        [](Store& s, const std::vector<VarId>& x) {
            std::vector<LinearTerm> terms;
            for (VarId y : x)
                terms.push_back({1, y});
            s.add_propagator(std::make_unique<Linear>(terms, LinearRelation::Eq, Integer(2)));
        },
        {100, 4});
    // The gcd of the coefficients (2) divides the constant or not; the rule is for equalities only.
    for (const int constant : {2, 3}) {
        for (const LinearRelation relation : {LinearRelation::Eq, LinearRelation::Le}) {
            check_native_propagator(
                "2x + 4y ==/<= " + std::to_string(constant), 2, kSmall,
                [constant, relation](const Assignment& a) {
                    const Integer sum = 2 * v(a, 0) + 4 * v(a, 1);
                    return relation == LinearRelation::Eq ? sum == constant : sum <= constant;
                },
                [constant, relation](Store& s, const std::vector<VarId>& x) {
                    s.add_propagator(std::make_unique<Linear>(std::vector<LinearTerm>{{2, x[0]}, {4, x[1]}},
                                                              relation, Integer(constant)));
                },
                {100, static_cast<std::uint64_t>(10 + constant)});
        }
    }
    // Over a huge range the equality 2x + 4y == 3 fails at once, without bounds creeping to it.
    Store store;
    const VarId x = store.new_var(Domain::range(-(Integer(1) << 62), Integer(1) << 62));
    const VarId y = store.new_var(Domain::range(-(Integer(1) << 62), Integer(1) << 62));
    store.add_propagator(
        std::make_unique<Linear>(std::vector<LinearTerm>{{2, x}, {4, y}}, LinearRelation::Eq, Integer(3)));
    CHECK_FALSE(store.propagate());
    CHECK(store.propagations() == 1);
}

// The word path stops as soon as a pass changes nothing (distinct variables), or, with unit
// coefficients, after a pass of each kind where no raised minimum landed beyond its bound. At the fixpoint of
// the bound rules every term's range fits both slacks (max - min of c * x <= constant - sum of minima and
// <= sum of maxima - constant), and a second run changes nothing: checked on every box of three
// variables in [-2, 2], with a hole or not.
TEST_CASE("native propagators: a linear equality reaches its fixpoint in one run") {
    const std::vector<std::pair<std::vector<LinearTerm>, Integer>> equations = {
        {{{1, 0}, {-1, 1}, {1, 2}}, Integer(0)}, // golomb's differences: d - m_j + m_i == 0
        {{{2, 0}, {-3, 1}, {1, 2}}, Integer(1)},
        {{{1, 0}, {1, 1}, {1, 2}}, Integer(2)},
    };
    std::vector<Domain> boxes;
    for (int lo = -2; lo <= 2; ++lo)
        for (int hi = lo; hi <= 2; ++hi) {
            boxes.push_back(Domain::range(lo, hi));
            if (hi - lo >= 2) { // a hole next to either bound: a narrowing lands beyond the bound it asked
                Domain holed = Domain::range(lo, hi);
                holed.remove(lo + 1);
                boxes.push_back(holed);
            }
            if (hi - lo >= 3) {
                Domain holed = Domain::range(lo, hi);
                holed.remove(hi - 1);
                boxes.push_back(holed);
            }
        }
    int runs = 0;
    for (const auto& equation : equations)
        for (const Domain& a : boxes)
            for (const Domain& b : boxes)
                for (const Domain& c : boxes) {
                    Store s;
                    s.new_var(a);
                    s.new_var(b);
                    s.new_var(c);
                    const int id = s.add_propagator(
                        std::make_unique<Linear>(equation.first, LinearRelation::Eq, equation.second));
                    if (!s.propagate()) continue;
                    CAPTURE(a.to_string());
                    CAPTURE(b.to_string());
                    CAPTURE(c.to_string());
                    std::vector<Integer> lows, highs;
                    Integer sum_lo = 0, sum_hi = 0;
                    for (const LinearTerm& t : equation.first) {
                        Integer low = t.coefficient * s.min(t.var), high = t.coefficient * s.max(t.var);
                        if (t.coefficient < 0) std::swap(low, high);
                        sum_lo += low;
                        sum_hi += high;
                        lows.push_back(low);
                        highs.push_back(high);
                    }
                    for (std::size_t i = 0; i < lows.size(); ++i) {
                        CHECK(highs[i] - lows[i] <= equation.second - sum_lo);
                        CHECK(highs[i] - lows[i] <= sum_hi - equation.second);
                    }
                    const std::vector<Domain> after{s.dom(0), s.dom(1), s.dom(2)};
                    CHECK(s.propagator(id).propagate(s) != PropStatus::Fail);
                    CHECK(s.dom(0) == after[0]);
                    CHECK(s.dom(1) == after[1]);
                    CHECK(s.dom(2) == after[2]);
                    ++runs;
                }
    CHECK(runs > 1000); // most boxes have solutions
}

TEST_CASE("native propagators: reification and implication") {
    // Variable 0 is the Boolean on {0, 1}; the others range over kSmall.
    const std::vector<std::vector<Integer>> domains{kBool, kSmall, kSmall};
    check_native_propagator(
        "b <-> x <= y", domains, [](const Assignment& a) { return v(a, 0) == (v(a, 1) <= v(a, 2)); },
        [](Store& s, const std::vector<VarId>& x) {
            s.add_propagator(std::make_unique<Reified>(
                x[0], std::make_unique<LessEqual>(view(x[1]), view(x[2]), 0),
                std::make_unique<LessEqual>(view(x[2]), view(x[1]), 1), Reified::Mode::Equivalence));
        });
    check_native_propagator(
        "b <-> x == y", domains, [](const Assignment& a) { return v(a, 0) == (v(a, 1) == v(a, 2)); },
        [](Store& s, const std::vector<VarId>& x) {
            s.add_propagator(std::make_unique<Reified>(x[0], std::make_unique<Equal>(view(x[1]), view(x[2])),
                                                       std::make_unique<NotEqual>(view(x[1]), view(x[2])),
                                                       Reified::Mode::Equivalence));
        },
        {300, 2});
    check_native_propagator(
        "b -> x != y", domains, [](const Assignment& a) { return v(a, 0) == 0 || v(a, 1) != v(a, 2); },
        [](Store& s, const std::vector<VarId>& x) {
            s.add_propagator(std::make_unique<Reified>(
                x[0], std::make_unique<NotEqual>(view(x[1]), view(x[2])),
                std::make_unique<Equal>(view(x[1]), view(x[2])), Reified::Mode::Implication));
        },
        {300, 3});
    check_native_propagator(
        "b <-> 2x - y == 1", domains,
        [](const Assignment& a) { return v(a, 0) == (2 * v(a, 1) - v(a, 2) == 1); },
        [](Store& s, const std::vector<VarId>& x) {
            const std::vector<LinearTerm> terms{{2, x[1]}, {-1, x[2]}};
            s.add_propagator(std::make_unique<Reified>(
                x[0], std::make_unique<Linear>(terms, LinearRelation::Eq, Integer(1)),
                std::make_unique<Linear>(terms, LinearRelation::Ne, Integer(1)), Reified::Mode::Equivalence));
        },
        {300, 4});
    check_native_propagator(
        "b <-> x in {-2, 0, 3}", {kBool, kSmall},
        [](const Assignment& a) { return v(a, 0) == (v(a, 1) == -2 || v(a, 1) == 0 || v(a, 1) == 3); },
        [](Store& s, const std::vector<VarId>& x) {
            const Domain set = Domain::values({-2, 0, 3});
            Domain outside = Domain::range(-3, 3);
            for (const int value : {-2, 0, 3})
                outside.remove(value);
            s.add_propagator(std::make_unique<Reified>(x[0], std::make_unique<Member>(x[1], set),
                                                       std::make_unique<Member>(x[1], outside),
                                                       Reified::Mode::Equivalence));
        },
        {300, 5});
}

TEST_CASE("native propagators: all_different") {
    const auto distinct = [](const Assignment& a) {
        return std::set<Integer>(a.begin(), a.end()).size() == a.size();
    };
    check_native_propagator(
        "all_different of 4 on [0, 3]", 4, interval(0, 3), distinct,
        [](Store& s, const std::vector<VarId>& x) { s.add_propagator(std::make_unique<AllDifferent>(x)); });
    check_native_propagator(
        "all_different of 3 on [-2, 2]", 3, interval(-2, 2), distinct,
        [](Store& s, const std::vector<VarId>& x) { s.add_propagator(std::make_unique<AllDifferent>(x)); },
        {300, 2});
    // At the word boundaries: values read as words, and 2^63 (beyond a word) through the Integer path.
    const Integer top = (Integer(1) << 63) - 2, bottom = -(Integer(1) << 63);
    check_native_propagator(
        "all_different of 3 on [2^63 - 2, 2^63]", 3, {top, top + 1, top + 2}, distinct,
        [](Store& s, const std::vector<VarId>& x) { s.add_propagator(std::make_unique<AllDifferent>(x)); });
    check_native_propagator(
        "all_different of 3 on [-2^63, -2^63 + 2]", 3, {bottom, bottom + 1, bottom + 2}, distinct,
        [](Store& s, const std::vector<VarId>& x) { s.add_propagator(std::make_unique<AllDifferent>(x)); });
    // Every value a word: the pigeonhole test in words, at the top of a word and across the whole
    // range (its hull, 2^64 values, is one more than a word can count).
    const Integer word_max = top + 1;
    check_native_propagator(
        "all_different of 3 on [2^63 - 3, 2^63 - 1]", 3, {word_max - 2, word_max - 1, word_max}, distinct,
        [](Store& s, const std::vector<VarId>& x) { s.add_propagator(std::make_unique<AllDifferent>(x)); });
    check_native_propagator(
        "all_different of 3 on {-2^63, -2^63 + 1, 2^63 - 2, 2^63 - 1}", 3,
        {bottom, bottom + 1, word_max - 1, word_max}, distinct,
        [](Store& s, const std::vector<VarId>& x) { s.add_propagator(std::make_unique<AllDifferent>(x)); });
    // Several variables fixed in one pass (their values removed from the others together, two of them
    // equal failing), and removals that fix more variables for the next pass.
    check_native_propagator(
        "all_different of 5 on [0, 4]", 5, interval(0, 4), distinct,
        [](Store& s, const std::vector<VarId>& x) { s.add_propagator(std::make_unique<AllDifferent>(x)); },
        {300, 6});
    // A variable listed twice cannot differ from itself: no assignment is a solution.
    check_native_propagator(
        "all_different(x, y, x)", 2, interval(-1, 1), [](const Assignment&) { return false; },
        [](Store& s, const std::vector<VarId>& x) {
            s.add_propagator(std::make_unique<AllDifferent>(std::vector<VarId>{x[0], x[1], x[0]}));
        });
    check_native_propagator(
        "all_different(x, y, x) beyond a word", 2, {word_max, word_max + 1},
        [](const Assignment&) { return false; },
        [](Store& s, const std::vector<VarId>& x) {
            s.add_propagator(std::make_unique<AllDifferent>(std::vector<VarId>{x[0], x[1], x[0]}));
        });
}

TEST_CASE("native propagators: element") {
    const std::vector<Integer> table{3, -1, 3, 0, 2};
    // index (1-based, as in FlatZinc) over [0, 6] so that out-of-range indices are tried too.
    check_native_propagator(
        "result == [3, -1, 3, 0, 2][index]", {interval(0, 6), kSmall},
        [table](const Assignment& a) {
            return v(a, 0) >= 1 && v(a, 0) <= 5 && a[1] == table[static_cast<std::size_t>(v(a, 0) - 1)];
        },
        [table](Store& s, const std::vector<VarId>& x) {
            s.add_propagator(std::make_unique<ElementConstant>(x[0], table, x[1], Integer(1)));
        },
        {300, 1, true});
    check_native_propagator(
        "result == [x, y, z][index]",
        {interval(0, 4), interval(-2, 2), interval(-2, 2), interval(-2, 2), interval(-2, 2)},
        [](const Assignment& a) {
            return v(a, 0) >= 1 && v(a, 0) <= 3 && v(a, 4) == v(a, static_cast<std::size_t>(v(a, 0)));
        },
        [](Store& s, const std::vector<VarId>& x) {
            s.add_propagator(std::make_unique<ElementVariable>(x[0], std::vector<VarId>{x[1], x[2], x[3]},
                                                               x[4], Integer(1)));
        },
        {200, 2});
}

TEST_CASE("native propagators: clauses and parity") {
    check_native_propagator(
        "a or b or not c or not d", 4, kBool,
        [](const Assignment& a) { return v(a, 0) == 1 || v(a, 1) == 1 || v(a, 2) == 0 || v(a, 3) == 0; },
        [](Store& s, const std::vector<VarId>& x) {
            s.add_propagator(
                std::make_unique<Clause>(std::vector<VarId>{x[0], x[1]}, std::vector<VarId>{x[2], x[3]}));
        },
        {100, 1});
    check_native_propagator(
        "a xor b xor c xor d", 4, kBool,
        [](const Assignment& a) { return (v(a, 0) + v(a, 1) + v(a, 2) + v(a, 3)) % 2 == 1; },
        [](Store& s, const std::vector<VarId>& x) { s.add_propagator(std::make_unique<OddParity>(x)); },
        {100, 2});
}

TEST_CASE("native propagators: truncated division and remainder (int_div, int_mod)") {
    const std::vector<std::vector<Integer>> domains{interval(-7, 7), interval(-3, 3), interval(-7, 7),
                                                    interval(-3, 3)};
    check_native_propagator(
        "x = y * q + r, truncated", domains,
        [](const Assignment& a) {
            return v(a, 1) != 0 && v(a, 2) == trunc_div(v(a, 0), v(a, 1)) &&
                   v(a, 3) == trunc_mod(v(a, 0), v(a, 1));
        },
        // How fzn-constrint posts int_div and int_mod.
        [](Store& s, const std::vector<VarId>& x) {
            post_division(s, x[0], x[1], x[2], x[3], Rounding::Truncate);
        },
        {300, 1});
}

TEST_CASE("native propagators: power with a variable exponent") {
    check_native_propagator(
        "z == x ^ y", {kSmall, interval(-1, 3), interval(-9, 9)},
        [](const Assignment& a) {
            if (v(a, 1) < 0) return false;
            long long p = 1;
            for (long long i = 0; i < v(a, 1); ++i)
                p *= v(a, 0);
            return p == v(a, 2);
        },
        [](Store& s, const std::vector<VarId>& x) {
            s.add_propagator(std::make_unique<PowerVariable>(x[2], x[0], x[1]));
        },
        {200, 1});
}

TEST_CASE("native propagators: count") {
    // count(x0, x1, x2 == y) == c with y = x3, c = x4.
    check_native_propagator(
        "count([x, y, z], v) == c",
        {interval(0, 2), interval(0, 2), interval(0, 2), interval(0, 2), interval(0, 3)},
        [](const Assignment& a) { return (a[0] == a[3]) + (a[1] == a[3]) + (a[2] == a[3]) == v(a, 4); },
        [](Store& s, const std::vector<VarId>& x) {
            s.add_propagator(std::make_unique<Count>(std::vector<VarId>{x[0], x[1], x[2]}, x[3], x[4]));
        },
        {300, 1});
}

namespace {

// The sums implied by counts c_k of values v_k in x (CardinalitySums' constraint):
// sum c_k == #{x_j in V} and sum v_k * c_k == sum of the x_j in V.
bool cardinality_sums_hold(const Assignment& x, const std::vector<long long>& values,
                           const Assignment& counts) {
    long long in = 0, sum = 0, count = 0, weighted = 0;
    for (const Integer& xi : x) {
        const long long value = static_cast<long long>(xi);
        if (std::find(values.begin(), values.end(), value) == values.end()) continue;
        ++in;
        sum += value;
    }
    for (std::size_t k = 0; k < values.size(); ++k) {
        count += static_cast<long long>(counts[k]);
        weighted += values[k] * static_cast<long long>(counts[k]);
    }
    return count == in && weighted == sum;
}

} // namespace

TEST_CASE("native propagators: the sums implied by counts of several values (CardinalitySums)") {
    // V a range, x partly outside it: x0..x2 in -1..3, counts of 0, 1, 2 in 0..3.
    const std::vector<Integer> x_values = interval(-1, 3), c_values = interval(0, 3);
    check_native_propagator(
        "counts of {0, 1, 2}: sums", {x_values, x_values, x_values, c_values, c_values, c_values},
        [](const Assignment& a) {
            return cardinality_sums_hold({a[0], a[1], a[2]}, {0, 1, 2}, {a[3], a[4], a[5]});
        },
        [](Store& s, const std::vector<VarId>& x) {
            s.add_propagator(std::make_unique<CardinalitySums>(std::vector<VarId>{x[0], x[1], x[2]},
                                                               std::vector<Integer>{0, 1, 2},
                                                               std::vector<VarId>{x[3], x[4], x[5]}));
        },
        {300, 1});
    // V not a range, a negative value, unsorted.
    const std::vector<Integer> wide = interval(-2, 3);
    check_native_propagator(
        "counts of {3, -2, 1}: sums", {wide, wide, wide, c_values, c_values, c_values},
        [](const Assignment& a) {
            return cardinality_sums_hold({a[0], a[1], a[2]}, {3, -2, 1}, {a[3], a[4], a[5]});
        },
        [](Store& s, const std::vector<VarId>& x) {
            s.add_propagator(std::make_unique<CardinalitySums>(std::vector<VarId>{x[0], x[1], x[2]},
                                                               std::vector<Integer>{3, -2, 1},
                                                               std::vector<VarId>{x[3], x[4], x[5]}));
        },
        {300, 2});
    // The magic sequence's shape: the counted variables are the counts (x_i counts value i).
    check_native_propagator(
        "x_i counts i in x (magic sequence), sums", 4, interval(0, 4),
        [](const Assignment& a) {
            return cardinality_sums_hold(a, {0, 1, 2, 3}, a);
        },
        [](Store& s, const std::vector<VarId>& x) {
            s.add_propagator(std::make_unique<CardinalitySums>(x, std::vector<Integer>{0, 1, 2, 3}, x));
        },
        {300, 3});
}

TEST_CASE("native propagators: int_times(x, x, p) is a square (one variable for both factors)") {
    // Issue 24: the aliased product narrows by integer roots; the harness checks that no solution
    // is lost on small domains of both signs, with and without perfect squares in p's domain.
    for (const auto& [name, square_domain, seed] :
         {std::tuple{"x * x == p, p in [-3, 17]", interval(-3, 17), 1200},
          std::tuple{"x * x == p, p in {0, 2, 4, 5, 9, 10, 16}", std::vector<Integer>{0, 2, 4, 5, 9, 10, 16},
                     1201}}) {
        check_native_propagator(
            name, {interval(-4, 4), square_domain},
            [](const Assignment& a) { return v(a, 0) * v(a, 0) == v(a, 1); },
            [](Store& s, const std::vector<VarId>& x) {
                s.add_propagator(std::make_unique<Times>(x[1], x[0], x[0]));
            },
            {300, static_cast<std::uint64_t>(seed)});
    }
}

TEST_CASE("native propagators: == on views (assignment to a constant, ranges, domains with holes)") {
    // The harness's random sub-domains have holes and ranges, so both the bounds path (two ranges)
    // and the domain path of Equal run; one side fixed takes the assignment path.
    const HarnessOptions exact{300, 6, true};
    check_native_propagator(
        "x == y + 2", 2, kSmall, [](const Assignment& a) { return v(a, 0) == v(a, 1) + 2; },
        [](Store& s, const std::vector<VarId>& x) {
            s.add_propagator(std::make_unique<Equal>(view(x[0]), View{x[1], 1, 2}));
        },
        exact);
    check_native_propagator(
        "x - 1 == -y", 2, kSmall, [](const Assignment& a) { return v(a, 0) - 1 == -v(a, 1); },
        [](Store& s, const std::vector<VarId>& x) {
            s.add_propagator(std::make_unique<Equal>(View{x[0], 1, -1}, View{x[1], -1, 0}));
        },
        exact);
    check_native_propagator(
        "2x == y - 1", 2, kSmall, [](const Assignment& a) { return 2 * v(a, 0) == v(a, 1) - 1; },
        [](Store& s, const std::vector<VarId>& x) {
            s.add_propagator(std::make_unique<Equal>(View{x[0], 2, 0}, View{x[1], 1, -1}));
        },
        exact);
    check_native_propagator(
        "x + 1 == x", 1, kSmall, [](const Assignment&) { return false; },
        [](Store& s, const std::vector<VarId>& x) {
            s.add_propagator(std::make_unique<Equal>(View{x[0], 1, 1}, view(x[0])));
        });
    const std::vector<std::vector<Integer>> domains{kBool, kSmall};
    check_native_propagator(
        "b <-> x == 2", domains, [](const Assignment& a) { return v(a, 0) == (v(a, 1) == 2); },
        [](Store& s, const std::vector<VarId>& x) {
            const View two{-1, 0, 2};
            s.add_propagator(std::make_unique<Reified>(x[0], std::make_unique<Equal>(view(x[1]), two),
                                                       std::make_unique<NotEqual>(view(x[1]), two),
                                                       Reified::Mode::Equivalence));
        },
        {300, 7});
    check_native_propagator(
        "b <-> 3 == 2x - 1", domains, [](const Assignment& a) { return v(a, 0) == (3 == 2 * v(a, 1) - 1); },
        [](Store& s, const std::vector<VarId>& x) {
            const View three{-1, 0, 3}, twice{x[1], 2, -1};
            s.add_propagator(std::make_unique<Reified>(x[0], std::make_unique<Equal>(three, twice),
                                                       std::make_unique<NotEqual>(three, twice),
                                                       Reified::Mode::Equivalence));
        },
        {300, 8});
    check_native_propagator(
        "b <-> 2x == 3 (never)", domains, [](const Assignment& a) { return v(a, 0) == 0; },
        [](Store& s, const std::vector<VarId>& x) {
            const View three{-1, 0, 3}, twice{x[1], 2, 0};
            s.add_propagator(std::make_unique<Reified>(x[0], std::make_unique<Equal>(twice, three),
                                                       std::make_unique<NotEqual>(twice, three),
                                                       Reified::Mode::Equivalence));
        },
        {300, 9});
}

TEST_CASE("native propagators: == on views at the 64-bit boundaries") {
    const Integer top = std::numeric_limits<std::int64_t>::max(),
                  bottom = std::numeric_limits<std::int64_t>::min();
    const Integer two62 = Integer(1) << 62;
    SUBCASE("x == y + 2^62 with x just below 2^63: ranges, bounds narrowed both ways") {
        Store s;
        const VarId x = s.new_var(Domain::range(top - 9, top)),
                    y = s.new_var(Domain::range(0, Integer(1) << 64));
        s.add_propagator(std::make_unique<Equal>(view(x), View{y, 1, two62}));
        REQUIRE(s.propagate());
        CHECK(s.dom(y) == Domain::range(top - 9 - two62, top - two62));
        CHECK(s.dom(x) == Domain::range(top - 9, top));
    }
    SUBCASE("y == x - 1 with x at -2^63: y goes below the words") {
        Store s;
        const VarId x = s.new_var(Domain::range(bottom, bottom + 5)),
                    y = s.new_var(Domain::range(-top * 4, 0));
        s.add_propagator(std::make_unique<Equal>(view(y), View{x, 1, -1}));
        REQUIRE(s.propagate());
        CHECK(s.dom(y) == Domain::range(bottom - 1, bottom + 4));
    }
    SUBCASE("x == 2^63 (one past the words) assigned; x == 2^63 - 1 + 2^63 over a scaled view") {
        Store s;
        const VarId x = s.new_var(Domain::range(0, Integer(1) << 70)), y = s.new_var(Domain::range(-10, top));
        s.add_propagator(std::make_unique<Equal>(view(x), View{-1, 0, top + 1}));
        s.add_propagator(std::make_unique<Equal>(View{y, 2, 0}, View{-1, 0, top * 2}));
        REQUIRE(s.propagate());
        CHECK(s.dom(x) == Domain::single(top + 1));
        CHECK(s.dom(y) == Domain::single(top));
    }
    SUBCASE("b <-> x == -2^63 decided by membership, with a hole next to it") {
        Store s;
        Domain d = Domain::range(bottom, bottom + 3);
        d.remove(bottom + 1);
        const VarId b = s.new_var(Domain::range(0, 1)), x = s.new_var(d);
        const View c{-1, 0, bottom + 1};
        s.add_propagator(std::make_unique<Reified>(b, std::make_unique<Equal>(view(x), c),
                                                   std::make_unique<NotEqual>(view(x), c),
                                                   Reified::Mode::Equivalence));
        REQUIRE(s.propagate());
        CHECK(s.dom(b) == Domain::single(0));
    }
}
