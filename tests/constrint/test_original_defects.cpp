// The original (Python) ConstrINT's known defects, each stated as a model with its correct answer.
#include <constrint/constrint.hpp>
#include <doctest/doctest.h>

#include <set>

using namespace constrint;

TEST_CASE("a divisibility constraint without a supporting value has no solution") {
    Model m; // x in {3, 4} dividing 10: the original answered 4
    Var x = m.var("x", std::vector<Integer>{3, 4});
    m.add(divides(x, 10));
    CHECK(solve(m).status == Status::Unsatisfiable);
    Model written; // the same, written as 10 % x == 0
    Var w = written.var("x", std::vector<Integer>{3, 4});
    written.add(Expr(10) % w == 0);
    CHECK(solve(written).status == Status::Unsatisfiable);
}

TEST_CASE("variables outside the search order are checked too") {
    Model m; // x <= 3, y * z = 1000003 * x with 2 <= y, z <= 5000: the original answered x = 1
    Var x = m.var("x", 1, default_upper_bound()), y = m.var("y", 2, 5000), z = m.var("z", 2, 5000);
    m.add(x <= 3);
    m.add(y * z == 1000003 * x);
    m.search({x});
    const Result r = solve(m);
    CHECK(r.status == Status::Unsatisfiable);
}

TEST_CASE("integer roots are exact: x^3 = y with 100 <= y <= 5000 has x = 5 ... 17") {
    Model m; // the original used floating point and found nothing
    Var x = m.var("x", 1, default_upper_bound()), y = m.var("y", 1, default_upper_bound());
    m.add(pow(x, 3) == y);
    m.add(y >= 100);
    m.add(y <= 5000);
    const Result r = solve_all(m);
    CHECK(r.status == Status::AllSolutions);
    std::vector<Integer> xs;
    for (const Solution& s : r.solutions) {
        CHECK(s[y] == s[x] * s[x] * s[x]);
        xs.push_back(s[x]);
    }
    std::vector<Integer> expected;
    for (int v = 5; v <= 17; ++v)
        expected.push_back(v);
    CHECK(xs == expected);
}

TEST_CASE("factors propagate through powers correctly: x^2 = y, 5 divides y, y <= 100") {
    Model m; // solutions x = 5 and x = 10
    Var x = m.var("x", 1, default_upper_bound()), y = m.var("y", 1, default_upper_bound());
    m.add(pow(x, 2) == y);
    m.add(y % 5 == 0);
    m.add(y <= 100);
    const Result r = solve_all(m);
    REQUIRE(r.solutions.size() == 2);
    CHECK(r.solutions[0][x] == 5);
    CHECK(r.solutions[1][x] == 10);
}

TEST_CASE("several solutions are distinct, and excluding the first one finds the next") {
    Model m;
    Var a = m.var("a", 1, 4), b = m.var("b", 1, 4);
    m.add(a + b == 5);
    const Result all = solve_all(m, 3);
    REQUIRE(all.solutions.size() == 3);
    std::set<std::vector<Integer>> distinct;
    for (const Solution& s : all.solutions)
        distinct.insert(s.values());
    CHECK(distinct.size() == 3);
    CHECK(all.status == Status::Satisfiable);

    const Integer first = all.solutions[0][a];
    m.add(a != first); // the original looped forever here
    const Result next = solve(m);
    REQUIRE(next.status == Status::Satisfiable);
    CHECK(next.solutions[0][a] != first);
}

TEST_CASE("large search domains, zero, negative numbers and values above 2^30") {
    Model m; // the original refused more than 2048 values and represented only [1, 2^30]
    Var big = m.var("big", 1, 1'000'000), neg = m.var("neg", -50, 50), huge = m.var("huge", 0, power(2, 90));
    m.add(big * 7 == 6'999'993);
    m.add(neg * neg == 49);
    m.add(neg < 0);
    m.add(huge == power(2, 89) + big);
    m.add(neg + 7 == 0);
    const Result r = solve(m);
    REQUIRE(r.status == Status::Satisfiable);
    CHECK(r.solutions[0][big] == 999'999);
    CHECK(r.solutions[0][neg] == -7);
    CHECK(r.solutions[0][huge] == power(2, 89) + 999'999);
    Model zero;
    Var z = zero.var("z", -3, 3);
    zero.add(z * z == 0);
    const Result rz = solve_all(zero);
    REQUIRE(rz.solutions.size() == 1);
    CHECK(rz.solutions[0][z] == 0);
}
