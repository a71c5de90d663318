// Parallel search: with several threads the first answer, the enumeration (in order) and the optimal
// values are those of one thread, the optimum's answer is the same for every thread count, and the
// limits, cancellation and statistics cover every thread. With any_first_answer (FlatZinc -p N) a
// satisfaction search returns real solutions, the same set and counts, in the threads' order.
#include <constrint/constrint.hpp>
#include <doctest/doctest.h>

#include "flatzinc_output.hpp"

#include <atomic>
#include <chrono>
#include <filesystem>
#include <random>
#include <sstream>
#include <thread>

using namespace constrint;

namespace {

SolveOptions with_threads(int threads) {
    SolveOptions options;
    options.threads = threads;
    return options;
}

std::vector<std::vector<Integer>> values_of(const Result& r) {
    std::vector<std::vector<Integer>> all;
    for (const Solution& s : r.solutions)
        all.push_back(s.values());
    return all;
}

// A small random model: 3 to 6 variables over small ranges, a few random constraints, a random
// search order and random value preferences (so that the first answers differ between models).
Model random_model(std::mt19937& random, bool with_objective) {
    Model m;
    const auto pick = [&](int lo, int hi) { return lo + static_cast<int>(random() % (hi - lo + 1)); };
    const int n = pick(3, 6);
    std::vector<Var> x;
    for (int i = 0; i < n; ++i) {
        const int lo = pick(-3, 2);
        x.push_back(m.var("x" + std::to_string(i), lo, lo + pick(2, 7)));
    }
    const auto any = [&] { return x[random() % x.size()]; };
    const int constraints = pick(1, 5);
    for (int c = 0; c < constraints; ++c) {
        switch (random() % 6) {
        case 0:
            m.add(any() + any() <= pick(-2, 8));
            break;
        case 1:
            m.add(any() != any());
            break;
        case 2:
            m.add(any() * any() >= pick(-4, 10));
            break;
        case 3:
            m.add((any() - any()) % pick(2, 3) == 0);
            break;
        case 4:
            m.add((any() + any() + any() == pick(0, 9)) | (any() == pick(0, 3)));
            break;
        default:
            m.add(any() < any());
            break;
        }
    }
    const Prefer prefers[] = {Prefer::Min, Prefer::Max, Prefer::SplitLow, Prefer::SplitHigh};
    for (const Var& v : x) {
        if (random() % 3 == 0) m.prefer(v, prefers[random() % 4]);
    }
    if (random() % 2) {
        std::vector<Var> order = x;
        std::shuffle(order.begin(), order.end(), random);
        order.erase(order.begin() + pick(1, n), order.end());
        m.search(order);
    }
    if (with_objective) {
        random() % 2 ? m.maximize(any() * pick(1, 3) + any()) : m.minimize(any() - any() * any());
        if (random() % 3 == 0) m.maximize(any()); // lexicographic
    }
    return m;
}

// 13 pigeons in 12 holes: unsatisfiable, far beyond any limit the tests set.
Model pigeonhole() {
    Model m;
    std::vector<Var> p;
    for (int i = 0; i < 13; ++i)
        p.push_back(m.var("p" + std::to_string(i), 1, 12));
    for (int i = 0; i < 13; ++i)
        for (int j = i + 1; j < 13; ++j)
            m.add(p[i] != p[j]);
    return m;
}

} // namespace

TEST_CASE("parallel search: enumeration and first answers equal one thread's over random models") {
    std::mt19937 random(19);
    int with_solutions = 0;
    for (int i = 0; i < 150; ++i) {
        const Model m = random_model(random, false);
        CAPTURE(write_cint(m));
        const Result one = solve_all(m);
        const Result first = solve(m);
        REQUIRE(one.status != Status::Unknown);
        with_solutions += one.solutions.empty() ? 0 : 1;
        for (int threads : {2, 3, 4}) {
            CAPTURE(threads);
            const Result all = solve_all(m, std::nullopt, with_threads(threads));
            CHECK(all.status == one.status);
            CHECK(values_of(all) == values_of(one)); // the same solutions in the same order
            CHECK(all.stats.solutions == one.stats.solutions);
            const Result f = solve(m, with_threads(threads));
            CHECK(f.status == first.status);
            CHECK(values_of(f) == values_of(first));
            const Result three = solve_all(m, 3, with_threads(threads));
            CHECK(values_of(three) == values_of(solve_all(m, 3)));
        }
    }
    CHECK(with_solutions > 50);
}

TEST_CASE("parallel search: any_first_answer returns real solutions; without it the first is one thread's") {
    std::mt19937 random(1920);
    int with_solutions = 0;
    for (int i = 0; i < 120; ++i) {
        const Model m = random_model(random, false);
        CAPTURE(write_cint(m));
        const Result one = solve_all(m);
        REQUIRE(one.status != Status::Unknown);
        auto every = values_of(one);
        std::sort(every.begin(), every.end());
        const auto is_solution = [&](const std::vector<Integer>& v) {
            return std::binary_search(every.begin(), every.end(), v);
        };
        with_solutions += every.empty() ? 0 : 1;
        for (int threads : {1, 2, 3}) {
            CAPTURE(threads);
            SolveOptions any = with_threads(threads);
            any.any_first_answer = true;
            const Result first = solve(m, any);
            CHECK(first.status == (every.empty() ? Status::Unsatisfiable : Status::Satisfiable));
            REQUIRE(first.solutions.size() == (every.empty() ? 0 : 1));
            if (!every.empty()) CHECK(is_solution(first.solutions[0].values()));
            if (threads == 1) CHECK(values_of(first) == values_of(solve(m))); // one thread: search order
            // Three distinct solutions (or all there are), each a real one.
            auto three = values_of(solve_all(m, 3, any));
            CHECK(three.size() == std::min<std::size_t>(3, every.size()));
            for (const auto& v : three)
                CHECK(is_solution(v));
            std::sort(three.begin(), three.end());
            CHECK(std::adjacent_find(three.begin(), three.end()) == three.end());
            // The enumeration: the same set and count, in any order.
            const Result all = solve_all(m, std::nullopt, any);
            CHECK(all.status == one.status);
            CHECK(all.stats.solutions == one.stats.solutions);
            auto sorted = values_of(all);
            std::sort(sorted.begin(), sorted.end());
            CHECK(sorted == every);
            // Off (the default), the first answer stays one thread's.
            CHECK(values_of(solve(m, with_threads(threads))) == values_of(solve(m)));
        }
    }
    CHECK(with_solutions > 40);
}

TEST_CASE("parallel search: any_first_answer keeps limits, cancellation and optima") {
    SolveOptions o = with_threads(2);
    o.any_first_answer = true;
    SUBCASE("node limit") {
        o.node_limit = 20000;
        const Result r = solve(pigeonhole(), o);
        CHECK(r.status == Status::Unknown);
        CHECK(r.stop_reason == "node limit 20000 reached");
        CHECK(r.stats.nodes <= 20000 + 2 * 32 + 64);
    }
    SUBCASE("cancel flag") {
        std::atomic<bool> cancel{false};
        o.cancel = &cancel;
        std::thread canceller([&] {
            std::this_thread::sleep_for(std::chrono::milliseconds(200));
            cancel = true;
        });
        const auto start = std::chrono::steady_clock::now();
        const Result r = solve_all(pigeonhole(), std::nullopt, o);
        canceller.join();
        CHECK(r.status == Status::Unknown);
        CHECK(r.stop_reason == "cancelled");
        CHECK(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() < 2.0);
    }
    SUBCASE("optimisation ignores it: the optimum's answer is one thread's") {
        std::mt19937 random(2020);
        for (int i = 0; i < 40; ++i) {
            const Model m = random_model(random, true);
            CAPTURE(write_cint(m));
            const Result one = solve(m), r = solve(m, o);
            CHECK(r.status == one.status);
            if (one.status == Status::Optimal && r.status == Status::Optimal)
                CHECK(r.solutions.back().values() == one.solutions.back().values());
        }
    }
}

TEST_CASE("parallel search: dynamic orders give the same solution counts") {
    std::mt19937 random(1919);
    for (int i = 0; i < 60; ++i) {
        const Model m = random_model(random, false);
        CAPTURE(write_cint(m));
        for (VarOrder order : {VarOrder::SmallestDomain, VarOrder::MostConstrained}) {
            SolveOptions one;
            one.order = order;
            SolveOptions two = with_threads(2);
            two.order = order;
            const Result a = solve_all(m, std::nullopt, one), b = solve_all(m, std::nullopt, two);
            auto sa = values_of(a), sb = values_of(b);
            std::sort(sa.begin(), sa.end());
            std::sort(sb.begin(), sb.end());
            CHECK(sa == sb);
            CHECK(a.status == b.status);
        }
    }
}

TEST_CASE("parallel search: optima and their answers equal one thread's, for every thread count") {
    std::mt19937 random(2019);
    int optimal = 0;
    for (int i = 0; i < 120; ++i) {
        const Model m = random_model(random, true);
        CAPTURE(write_cint(m));
        const Result one = solve(m);
        REQUIRE(one.status != Status::Unknown);
        std::optional<std::vector<Integer>> answer;
        for (int threads : {2, 3, 4, 2}) {
            CAPTURE(threads);
            const Result r = solve(m, with_threads(threads));
            CHECK(r.status == one.status);
            if (one.status != Status::Optimal || r.status != Status::Optimal) continue;
            for (const Objective& o : m.objectives())
                CHECK(r.solutions.back().evaluate(o.term) == one.solutions.back().evaluate(o.term));
            if (!answer) answer = r.solutions.back().values();
            CHECK(r.solutions.back().values() == *answer);
            // And it is one thread's: the first optimal solution in search order (docs/solver.md).
            CHECK(r.solutions.back().values() == one.solutions.back().values());
        }
        optimal += one.status == Status::Optimal ? 1 : 0;
    }
    CHECK(optimal > 50);
}

TEST_CASE("parallel search: the repository's models solve as with one thread") {
    const std::filesystem::path dir = std::filesystem::path(CONSTRINT_SOURCE_DIR) / "tests/cli/models";
    int models = 0;
    for (const auto& entry : std::filesystem::directory_iterator(dir)) {
        const std::string name = entry.path().filename().string();
        // pigeonhole and many_solutions exist to be stopped by limits; parse_error does not parse.
        if (name == "pigeonhole.cint" || name == "many_solutions.cint" || name == "parse_error.cint")
            continue;
        CAPTURE(name);
        const Model m = parse_cint(read_model_file(entry.path().string()), name);
        const bool optimise = !m.objectives().empty();
        const Result one = optimise ? solve(m) : solve_all(m);
        for (int threads : {2, 4}) {
            const Result r = optimise ? solve(m, with_threads(threads))
                                      : solve_all(m, std::nullopt, with_threads(threads));
            CHECK(r.status == one.status);
            if (optimise) {
                REQUIRE(!r.solutions.empty());
                CHECK(r.solutions.back().values() == one.solutions.back().values());
            } else {
                CHECK(values_of(r) == values_of(one));
            }
        }
        ++models;
    }
    CHECK(models >= 7);
}

TEST_CASE("parallel search: node, failure and time limits count every thread") {
    const Model m = pigeonhole();
    SUBCASE("nodes") {
        SolveOptions o = with_threads(2);
        o.node_limit = 20000;
        const Result r = solve(m, o);
        CHECK(r.status == Status::Unknown);
        CHECK(r.stop_reason == "node limit 20000 reached");
        // Each thread stops at its next check once the total reaches the limit; the threads add their
        // counts 32 at a time, and the split's choice points (up to 64) count too.
        CHECK(r.stats.nodes >= 20000);
        CHECK(r.stats.nodes <= 20000 + 2 * 32 + 64);
    }
    SUBCASE("failures") {
        SolveOptions o = with_threads(3);
        o.failure_limit = 5000;
        const Result r = solve(m, o);
        CHECK(r.status == Status::Unknown);
        CHECK(r.stop_reason == "failure limit 5000 reached");
        CHECK(r.stats.failures >= 5000);
    }
    SUBCASE("time") {
        SolveOptions o = with_threads(2);
        o.time_limit_seconds = 0.3;
        const auto start = std::chrono::steady_clock::now();
        const Result r = solve(m, o);
        const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        CHECK(r.status == Status::Unknown);
        CHECK(r.stop_reason.rfind("time limit", 0) == 0);
        CHECK(took < 1.5);
    }
}

TEST_CASE("parallel search: cancellation and the interrupt callback stop every thread") {
    const Model m = pigeonhole();
    SUBCASE("cancel flag") {
        std::atomic<bool> cancel{false};
        SolveOptions o = with_threads(2);
        o.cancel = &cancel;
        std::thread canceller([&] {
            std::this_thread::sleep_for(std::chrono::milliseconds(200));
            cancel = true;
        });
        const auto start = std::chrono::steady_clock::now();
        const Result r = solve(m, o);
        canceller.join();
        CHECK(r.status == Status::Unknown);
        CHECK(r.stop_reason == "cancelled");
        CHECK(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() < 2.0);
    }
    SUBCASE("interrupt callback, asked in the caller's thread") {
        const std::thread::id caller = std::this_thread::get_id();
        std::atomic<int> calls{0};
        bool other_thread = false;
        SolveOptions o = with_threads(2);
        o.interrupt = [&] {
            other_thread = other_thread || std::this_thread::get_id() != caller;
            return ++calls > 20;
        };
        const Result r = solve(m, o);
        CHECK(r.status == Status::Unknown);
        CHECK(r.stop_reason == "interrupted");
        CHECK(!other_thread);
    }
    SUBCASE("a Solver destroyed mid-enumeration stops its threads") {
        Model many;
        std::vector<Var> v;
        for (int i = 0; i < 10; ++i)
            v.push_back(many.var("v" + std::to_string(i), 1, 12));
        for (int i = 0; i < 10; ++i)
            for (int j = i + 1; j < 10; ++j)
                many.add(v[i] != v[j]);
        Solver solver(many, with_threads(2));
        for (int i = 0; i < 5; ++i)
            REQUIRE(solver.next());
        // A long enumeration read one solution at a time: the threads ahead of the caller wait for it
        // (a bounded number held per subtree) and the order is one thread's.
        Solver one(many), two(many, with_threads(3));
        for (int i = 0; i < 20000; ++i) {
            const std::optional<Solution> a = one.next(), b = two.next();
            REQUIRE(a);
            REQUIRE(b);
            REQUIRE(a->values() == b->values());
        }
    }
}

TEST_CASE("parallel search: statistics sum the threads'; bad thread counts are refused") {
    Model m;
    Var a = m.var("a", 1, 9), b = m.var("b", 1, 9), c = m.var("c", 1, 9);
    m.add(a + b + c == 15);
    m.add(a != b);
    const Result one = solve_all(m);
    const Result two = solve_all(m, std::nullopt, with_threads(2));
    CHECK(two.stats.solutions == one.stats.solutions);
    CHECK(two.stats.solutions == two.solutions.size());
    CHECK(two.stats.nodes > 0);
    CHECK(two.stats.propagations > 0);
    for (int bad : {0, -1, kMaxThreads + 1}) {
        CAPTURE(bad);
        CHECK_THROWS_WITH_AS(solve(m, with_threads(bad)),
                             doctest::Contains("threads must be between 1 and 1024"), ModelError);
    }
}

TEST_CASE("parallel search: FlatZinc -p N: a real solution, the same solutions and optimum") {
    const std::string satisfy = "var 1..6: x :: output_var;\nvar 1..6: y :: output_var;\n"
                                "var 1..6: z :: output_var;\n"
                                "constraint int_lin_le([1, 1, 1], [x, y, z], 9);\n"
                                "constraint int_ne(x, y);\nconstraint int_ne(y, z);\n"
                                "solve satisfy;\n";
    const std::string optimise = "var 1..9: x :: output_var;\nvar 1..9: y :: output_var;\n"
                                 "var -100..100: o :: output_var;\n"
                                 "constraint int_lin_le([1, 1], [x, y], 10);\n"
                                 "constraint int_times(x, y, o);\nsolve maximize o;\n";
    const auto run = [](const std::string& fzn, FlatZincOptions options) {
        std::ostringstream out;
        solve_flatzinc(fzn, "test.fzn", options, out);
        return out.str();
    };
    for (int threads : {2, 3}) {
        FlatZincOptions one, many;
        many.threads = threads;
        const std::vector<std::string> first = sorted_solutions(run(satisfy, many));
        one.all_solutions = true;
        const std::vector<std::string> every = sorted_solutions(run(satisfy, one));
        REQUIRE(first.size() == 1);
        CHECK(std::binary_search(every.begin(), every.end(), first[0])); // one of the solutions
        many.all_solutions = true;
        const std::string all = run(satisfy, many);
        CHECK(sorted_solutions(all) == every);
        CHECK(all.substr(all.size() - 11) == "==========\n");
        const std::string a = run(optimise, one), b = run(optimise, many);
        CHECK(a.substr(a.rfind("----------", a.size() - 20) - 30) ==
              b.substr(b.rfind("----------", b.size() - 20) - 30)); // the same optimum, then ==========
        CHECK(b.find("==========") != std::string::npos);
    }
    FlatZincOptions bad;
    bad.threads = 0;
    CHECK_THROWS_AS(run(satisfy, bad), ModelError);
}
