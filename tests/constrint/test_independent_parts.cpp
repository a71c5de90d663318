// Independent parts: a model split into parts by its constraint graph gives the same first answer,
// solution set, counts and optima as the whole search (split_parts off), and finds a part without
// solutions without enumerating the other parts.
#include <constrint/constrint.hpp>
#include <doctest/doctest.h>

#include <algorithm>
#include <random>

using namespace constrint;

namespace {

SolveOptions split(bool on) {
    SolveOptions options;
    options.split_parts = on;
    return options;
}

std::vector<std::vector<Integer>> sorted_values(const Result& r) {
    std::vector<std::vector<Integer>> all;
    for (const Solution& s : r.solutions)
        all.push_back(s.values());
    std::sort(all.begin(), all.end());
    return all;
}

// Six free digits (a million solutions) beside `pigeons` pigeons in one hole fewer: only search
// refutes the pigeonhole part.
Model digits_and_pigeonhole(int pigeons) {
    Model m;
    std::vector<Var> digits, holes;
    for (int i = 0; i < 6; ++i)
        digits.push_back(m.var("a" + std::to_string(i), 0, 9));
    m.add(digits[0] + digits[1] + digits[2] + digits[3] + digits[4] + digits[5] >= 0);
    for (int i = 0; i < pigeons; ++i)
        holes.push_back(m.var("p" + std::to_string(i), 1, pigeons - 1));
    for (int i = 0; i < pigeons; ++i)
        for (int j = i + 1; j < pigeons; ++j)
            m.add(holes[i] != holes[j]);
    return m;
}

// A random model of a few small variables, some constraints linking pairs of them.
Model random_model(std::mt19937& rng, bool with_objective) {
    Model m;
    const int n = 2 + static_cast<int>(rng() % 4);
    std::vector<Var> x;
    for (int i = 0; i < n; ++i)
        x.push_back(m.var("x" + std::to_string(i), Integer(static_cast<int>(rng() % 2)),
                          Integer(2 + static_cast<int>(rng() % 3))));
    const int constraints = 1 + static_cast<int>(rng() % 4);
    for (int c = 0; c < constraints; ++c) {
        const Var& a = x[rng() % n];
        const Var& b = x[rng() % n];
        const int k = static_cast<int>(rng() % 5);
        switch (rng() % 5) {
        case 0:
            m.add(a != b);
            break;
        case 1:
            m.add(a + b >= k);
            break;
        case 2:
            m.add(a != k);
            break;
        case 3:
            m.add(a * b != k);
            break;
        default:
            m.add(a <= b);
            break;
        }
    }
    if (rng() % 2) m.prefer(x[0], Prefer::Max);
    if (rng() % 3 == 0) m.search({x[n - 1], x[0]});
    if (with_objective) {
        if (rng() % 2)
            m.maximize(x[rng() % n]);
        else
            m.minimize(x[0] + 2 * x[n - 1]);
    }
    return m;
}

} // namespace

TEST_CASE("a part without solutions is found without enumerating the other parts") {
    const Model m = digits_and_pigeonhole(7);
    const Result split_result = solve(m, split(true));
    CHECK(split_result.status == Status::Unsatisfiable);
    CHECK(split_result.stats.nodes < 2000); // 725 seen: the pigeonhole part alone
    SolveOptions whole = split(false);
    whole.node_limit = 20000; // the whole search backtracks through the digits first
    CHECK(solve(m, whole).status == Status::Unknown);
    const CountResult count = count_solutions(m);
    CHECK(count.status == Status::Unsatisfiable);
    CHECK(count.count == Integer(0));
}

TEST_CASE("random models: first answers, solution sets, counts and optima are the whole search's") {
    std::mt19937 rng(19);
    for (int round = 0; round < 400; ++round) {
        CAPTURE(round);
        const Model m = random_model(rng, false);
        const Result first_split = solve(m, split(true)), first_whole = solve(m, split(false));
        REQUIRE(first_split.status == first_whole.status);
        if (!first_whole.solutions.empty())
            CHECK(first_split.solutions.front().values() == first_whole.solutions.front().values());
        const Result all_split = solve_all(m, std::nullopt, split(true));
        const Result all_whole = solve_all(m, std::nullopt, split(false));
        CHECK(all_split.status == all_whole.status);
        CHECK(sorted_values(all_split) == sorted_values(all_whole));
        const CountResult count = count_solutions(m, split(true));
        CHECK(count.count == Integer(all_whole.solutions.size()));

        const Model o = random_model(rng, true);
        const Result opt_split = solve(o, split(true)), opt_whole = solve(o, split(false));
        REQUIRE(opt_split.status == opt_whole.status);
        if (!opt_whole.solutions.empty())
            CHECK(opt_split.solutions.back().values() == opt_whole.solutions.back().values());
    }
}

TEST_CASE("the count of a product of parts is exact beyond 2^64") {
    Model m;
    for (int i = 0; i < 5; ++i) {
        const Var a = m.var("a" + std::to_string(i), 0, 255), b = m.var("b" + std::to_string(i), 0, 255);
        m.add(a != b);
    }
    const CountResult count = count_solutions(m);
    REQUIRE(count.status == Status::AllSolutions);
    Integer expected = 1;
    for (int i = 0; i < 5; ++i)
        expected *= 256 * 255;
    CHECK(count.count == expected); // 65280^5, about 2^80
    CHECK(count.stats.nodes < 5 * 200000);
}

TEST_CASE("limits count every part's nodes; threads give the same answers") {
    const Model m = digits_and_pigeonhole(9);
    SolveOptions options;
    options.node_limit = 100;
    const Result stopped = solve(m, options);
    CHECK(stopped.status == Status::Unknown);
    CHECK(stopped.stats.nodes <= 100 + 64);
    std::mt19937 rng(7);
    for (int round = 0; round < 40; ++round) {
        const Model r = random_model(rng, false);
        SolveOptions two;
        two.threads = 2;
        CHECK(sorted_values(solve_all(r, std::nullopt, two)) ==
              sorted_values(solve_all(r, std::nullopt, split(false))));
    }
}
