// Search on classic problems with known answers.
#include <constrint/constrint.hpp>
#include <doctest/doctest.h>

#include "models/classic_models.hpp"

#include <boost/multiprecision/miller_rabin.hpp>

#include <set>

using namespace constrint;
using constrint::examples::queens;

namespace {

bool is_queens_solution(const std::vector<Integer>& q) {
    for (std::size_t i = 0; i < q.size(); ++i) {
        for (std::size_t j = i + 1; j < q.size(); ++j) {
            const Integer d = q[i] > q[j] ? Integer(q[i] - q[j]) : Integer(q[j] - q[i]);
            if (d == 0 || d == j - i) return false;
        }
    }
    return true;
}

} // namespace

TEST_CASE("n-queens: 92 solutions for 8, 724 for 10, each a real placement, none twice") {
    for (auto [n, count] : {std::pair{8, 92}, std::pair{10, 724}}) {
        const Result r = solve_all(queens(n));
        CHECK(r.status == Status::AllSolutions);
        CHECK(r.solutions.size() == static_cast<std::size_t>(count));
        std::set<std::vector<Integer>> distinct;
        for (const Solution& s : r.solutions) {
            CHECK(is_queens_solution(s.values()));
            distinct.insert(s.values());
        }
        CHECK(distinct.size() == r.solutions.size());
    }
}

TEST_CASE("SEND + MORE = MONEY has the unique solution 9567 + 1085 = 10652") {
    Model m;
    auto v = [&](const char* name, int lo) { return m.var(name, lo, 9); };
    Var S = v("S", 1), E = v("E", 0), N = v("N", 0), D = v("D", 0), M = v("M", 1), O = v("O", 0),
        R = v("R", 0), Y = v("Y", 0);
    const std::vector<Var> letters{S, E, N, D, M, O, R, Y};
    for (std::size_t i = 0; i < letters.size(); ++i) {
        for (std::size_t j = i + 1; j < letters.size(); ++j)
            m.add(letters[i] != letters[j]);
    }
    m.add(1000 * S + 100 * E + 10 * N + D + 1000 * M + 100 * O + 10 * R + E ==
          10000 * M + 1000 * O + 100 * N + 10 * E + Y);
    const Result r = solve_all(m);
    REQUIRE(r.solutions.size() == 1);
    CHECK(r.status == Status::AllSolutions);
    const Solution& s = r.solutions[0];
    CHECK(s[S] == 9);
    CHECK(s[E] == 5);
    CHECK(s[N] == 6);
    CHECK(s[D] == 7);
    CHECK(s[M] == 1);
    CHECK(s[O] == 0);
    CHECK(s[R] == 8);
    CHECK(s[Y] == 2);
}

TEST_CASE("pigeonhole: 7 pigeons in 6 holes is unsatisfiable") {
    const Result r = solve(examples::pigeonhole(7, 6));
    CHECK(r.status == Status::Unsatisfiable);
    CHECK(r.solutions.empty());
    CHECK(r.stats.failures > 0);
}

TEST_CASE("optimisation: the largest x * y with x + 2y <= 40 is 200 (x = 20, y = 10), proven") {
    Model m;
    Var x = m.var("x", 0, 100), y = m.var("y", 0, 100);
    m.add(x + 2 * y <= 40);
    m.maximize(x * y);
    const Result r = solve(m);
    CHECK(r.status == Status::Optimal);
    REQUIRE(!r.solutions.empty());
    const Solution& best = r.solutions.back();
    CHECK(best.evaluate(x * y) == 200);
    CHECK(best[x] == 20);
    CHECK(best[y] == 10);
    for (std::size_t i = 1; i < r.solutions.size(); ++i) {
        CHECK(r.solutions[i].evaluate(x * y) > r.solutions[i - 1].evaluate(x * y));
    }
}

TEST_CASE("big integers: x * y * z == 2^80 * 3^7 with x, y, z in [1, 2^70]") {
    Model m;
    const Integer big = power(2, 70), target = power(2, 80) * power(3, 7);
    Var x = m.var("x", 1, big), y = m.var("y", 1, big), z = m.var("z", 1, big);
    m.add(x * y * z == target);
    m.prefer(x, Prefer::Max);
    const Result r = solve(m);
    REQUIRE(r.status == Status::Satisfiable);
    const Solution& s = r.solutions[0];
    CHECK(s[x] * s[y] * s[z] == target);
    CHECK(s[x] == power(2, 70)); // the largest divisor of the target that is <= 2^70
    CHECK(r.stats.nodes < 1000);
}

TEST_CASE("products of large primes are answered at once, not by creeping bounds (issue 24)") {
    // A crawl (bounds narrowed by one value per round, or one divisor candidate per node) runs
    // into these limits and ends Unknown or Satisfiable, which fails the status checks.
    SolveOptions limits;
    limits.node_limit = 16;
    limits.time_limit_seconds = 20; // generous: the answers take well under a second
    const Integer p("35184372088777"), q("35184372088891"), square = p * p, product = p * q;
    SUBCASE("x * x == p^2 is x^2 == p^2: x = p") {
        Model m;
        const Var x = m.var("x", Integer(1), square);
        m.add(x * x == square);
        const Result r = solve_all(m, std::nullopt, limits);
        REQUIRE(r.status == Status::AllSolutions);
        REQUIRE(r.solutions.size() == 1);
        CHECK(r.solutions[0][x] == p);
        CHECK(r.stats.nodes <= 2);
    }
    // x * y == p * q with x in [2, p * q], y in [y_min, p * q], and x <= y when ordered.
    const auto factor_pairs = [&](const Integer& y_min, bool ordered) {
        Model m;
        const Var x = m.var("x", Integer(2), product);
        const Var y = m.var("y", y_min, product);
        m.add(x * y == product);
        if (ordered) m.add(x <= y);
        const Result r = solve_all(m, std::nullopt, limits);
        std::vector<std::pair<Integer, Integer>> pairs;
        for (const Solution& s : r.solutions)
            pairs.emplace_back(s[x], s[y]);
        CHECK(r.status == Status::AllSolutions);
        CHECK(r.stats.nodes <= 4);
        return pairs;
    };
    using Pairs = std::vector<std::pair<Integer, Integer>>;
    SUBCASE("x * y == p * q over [2, p * q]: the two orders of the factors") {
        CHECK(factor_pairs(2, false) == Pairs{{p, q}, {q, p}});
    }
    SUBCASE("x * y == p * q with x <= y and 2 <= x: x = p") {
        CHECK(factor_pairs(1, true) == Pairs{{p, q}});
    }
}

TEST_CASE("x * y == p * q with 60-bit primes p and q: both orders within a node limit (issue 24, ECM)") {
    const Integer p("764418451606675909"), q("973443068684375797"), product = p * q;
    REQUIRE(boost::multiprecision::miller_rabin_test(p, 30));
    REQUIRE(boost::multiprecision::miller_rabin_test(q, 30));
    Model m;
    const Var x = m.var("x", Integer(2), product), y = m.var("y", Integer(2), product);
    m.add(x * y == product);
    SolveOptions limits;
    limits.node_limit = 16;         // creeping bounds would need about 2^60 rounds
    limits.time_limit_seconds = 60; // generous: the factoring takes well under a second
    const Result r = solve_all(m, std::nullopt, limits);
    REQUIRE(r.status == Status::AllSolutions);
    REQUIRE(r.solutions.size() == 2);
    CHECK(r.solutions[0][x] == p);
    CHECK(r.solutions[0][y] == q);
    CHECK(r.solutions[1][x] == q);
    CHECK(r.solutions[1][y] == p);
    CHECK(r.stats.nodes <= 4);
}
