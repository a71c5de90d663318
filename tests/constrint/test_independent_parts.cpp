// Independent parts: a model split into parts by its constraint graph gives the same first answer,
// solution set, counts and optima as the whole search (split_parts off), and finds a part without
// solutions without enumerating the other parts.
#include <constrint/constrint.hpp>
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
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

// A random model of a few small variables, some constraints linking pairs of them. With `keep`, only
// the constraints it marks are added (the same draws: the same model less the others).
Model random_model(std::mt19937& rng, bool with_objective, const std::vector<bool>& keep = {}) {
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
        const auto drawn = [&]() -> Constraint {
            switch (rng() % 5) {
            case 0:
                return a != b;
            case 1:
                return a + b >= k;
            case 2:
                return a != k;
            case 3:
                return a * b != k;
            default:
                return a <= b;
            }
        }();
        if (keep.empty() || keep[static_cast<std::size_t>(c)]) m.add(drawn);
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

namespace {

// Two digits and a part `b0 != b1, b1 < 5` (satisfiable), five pigeons in four holes, then `c <= 3`.
Model parts_around_a_pigeonhole(std::vector<std::size_t>& pigeonhole_constraints) {
    Model m;
    const Var a0 = m.var("a0", 0, 9), a1 = m.var("a1", 0, 9);
    m.add(a0 + a1 >= 0, "digits");
    const Var b0 = m.var("b0", 0, 9), b1 = m.var("b1", 0, 9);
    m.add(b0 != b1, "b differ");
    m.add(b1 < 5, "b1 small");
    std::vector<Var> holes;
    for (int i = 0; i < 5; ++i)
        holes.push_back(m.var("p" + std::to_string(i), 1, 4));
    for (int i = 0; i < 5; ++i)
        for (int j = i + 1; j < 5; ++j)
            pigeonhole_constraints.push_back(m.add(holes[i] != holes[j], "pigeons"));
    m.add(m.var("c", 0, 9) <= 3, "c small");
    return m;
}

} // namespace

TEST_CASE("an explanation of a split model names the failing part's constraints only") {
    std::vector<std::size_t> pigeonhole;
    const Model m = parts_around_a_pigeonhole(pigeonhole);
    const std::optional<Conflict> split_conflict = explain_conflict(m, split(true));
    const std::optional<Conflict> whole_conflict = explain_conflict(m, split(false));
    REQUIRE(split_conflict);
    REQUIRE(whole_conflict);
    CHECK(split_conflict->minimal);
    CHECK(split_conflict->constraints == pigeonhole); // without any one of them, 5 pigeons fit
    CHECK(whole_conflict->constraints == pigeonhole);
    // Split: the two parts before it and the pigeonhole part checked, then its 10 constraints (13).
    // Whole: the model once, then each of its 14 constraints, every check under the digits' product.
    CHECK(split_conflict->checks == 2 + 1 + 10);
    CHECK(whole_conflict->checks == 1 + 14);
    CHECK(split_conflict->nodes < 500);                          // 60 seen
    CHECK(split_conflict->nodes * 1000 < whole_conflict->nodes); // 816078 seen
    MESSAGE("explanation nodes: split " << split_conflict->nodes << ", whole " << whole_conflict->nodes);

    // A model whose parts all have solutions has no explanation, split or not.
    Model satisfiable;
    const Var x = satisfiable.var("x", 0, 3), y = satisfiable.var("y", 0, 3);
    satisfiable.add(x != 1);
    satisfiable.add(y != 2);
    CHECK_FALSE(explain_conflict(satisfiable, split(true)));
    CHECK_FALSE(explain_conflict(satisfiable, split(false)));
}

TEST_CASE("random models: a split explanation is unsatisfiable and minimal") {
    std::mt19937 rng(23);
    int explained = 0;
    for (int round = 0; round < 600; ++round) {
        CAPTURE(round);
        const std::mt19937 draws = rng;
        const Model m = random_model(rng, false);
        const std::optional<Conflict> conflict = explain_conflict(m, split(true));
        const bool unsatisfiable = solve(m, split(false)).status == Status::Unsatisfiable;
        REQUIRE(conflict.has_value() == unsatisfiable);
        if (!conflict) continue;
        ++explained;
        REQUIRE(conflict->minimal);
        // The model again with the conflict's constraints only: no solution; less any one: a solution.
        std::vector<bool> keep(m.constraints().size(), false);
        for (std::size_t c : conflict->constraints)
            keep[c] = true;
        std::mt19937 again = draws;
        CHECK(solve(random_model(again, false, keep), split(false)).status == Status::Unsatisfiable);
        for (std::size_t c : conflict->constraints) {
            keep[c] = false;
            again = draws;
            CHECK(solve(random_model(again, false, keep), split(false)).status != Status::Unsatisfiable);
            keep[c] = true;
        }
    }
    CHECK(explained >= 30);
    MESSAGE("unsatisfiable random models explained: " << explained);
}

TEST_CASE("threads with parts: one node budget for every part and thread, statistics summed") {
    // Two parts of 90 * 90 (a, b) pairs each, counted with two threads: nodes of one part, then both.
    const auto pairs = [](int parts) {
        Model m;
        for (int i = 0; i < parts; ++i) {
            const Var a = m.var("a" + std::to_string(i), 0, 89), b = m.var("b" + std::to_string(i), 0, 89);
            m.add(a != b);
        }
        return m;
    };
    SolveOptions two;
    two.threads = 2;
    const CountResult one_part = count_solutions(pairs(1), two);
    const CountResult both = count_solutions(pairs(2), two);
    REQUIRE(one_part.count == Integer(90 * 89));
    REQUIRE(both.count == Integer(90 * 89) * (90 * 89));
    const std::uint64_t part_nodes = one_part.stats.nodes;
    CHECK(both.stats.nodes >= 2 * part_nodes - 2 * 64); // summed over the parts (each split's choice points
    CHECK(both.stats.nodes <= 2 * part_nodes + 2 * 64); // may differ)
    MESSAGE("nodes: one part " << part_nodes << ", both " << both.stats.nodes);
    // A limit above one part's nodes and below both parts': the parts share it, so it stops the count.
    SolveOptions limited = two;
    limited.node_limit = part_nodes * 3 / 2;
    const CountResult stopped = count_solutions(pairs(2), limited);
    CHECK(stopped.status == Status::Unknown);
    CHECK_FALSE(stopped.count.has_value());
    CHECK(stopped.stop_reason == "node limit " + std::to_string(*limited.node_limit) + " reached");
    // Each thread stops at its next check; the threads add their counts 32 at a time, and each part's
    // split adds up to 64 choice points.
    CHECK(stopped.stats.nodes >= *limited.node_limit);
    CHECK(stopped.stats.nodes <= *limited.node_limit + 2 * 32 + 2 * 64);

    // A first solution: the digits' part answers at once, the pigeonhole part uses up the budget.
    const Model m = digits_and_pigeonhole(12);
    SolveOptions nodes = two;
    nodes.node_limit = 1000;
    const Result r = solve(m, nodes);
    CHECK(r.status == Status::Unknown);
    CHECK(r.stop_reason == "node limit 1000 reached");
    CHECK(r.stats.nodes >= 1000);
    CHECK(r.stats.nodes <= 1000 + 2 * 32 + 2 * 64);
    SolveOptions time = two;
    time.time_limit_seconds = 0.3;
    const auto start = std::chrono::steady_clock::now();
    const Result timed = solve(m, time);
    CHECK(timed.status == Status::Unknown);
    CHECK(timed.stop_reason.rfind("time limit", 0) == 0);
    CHECK(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() < 1.5);
}
