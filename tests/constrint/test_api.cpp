// The C++ API around the engine: errors, limits, cancellation, orders, preferences, explanations.
#include <constrint/constrint.hpp>
#include <doctest/doctest.h>

#include "models/classic_models.hpp"

#include <atomic>
#include <functional>
#include <set>
#include <thread>

using namespace constrint;

namespace {

std::string message_of(const std::function<void()>& f) {
    try {
        f();
    } catch (const ModelError& e) {
        return e.what();
    }
    return "no ModelError";
}

} // namespace

TEST_CASE("bad models get a ModelError with a clear message") {
    Model m;
    Var x = m.var("x", 1, 10);
    CHECK(message_of([&] { m.at("nope"); }) == "unknown variable 'nope'");
    CHECK(message_of([&] { m.var("x", 1, 2); }) == "variable 'x' is declared twice");
    CHECK(message_of([&] { pow(x, -2); }).find("negative exponent -2") != std::string::npos);
    CHECK(message_of([&] { pow(x, 1 << 20); }).find("exceeds the limit") != std::string::npos);

    Var zero = m.var("zero", 0, 0);
    Model div = m;
    div.minimize(x / zero);
    CHECK(message_of([&] { solve(div); }) == "division by a term whose only value is 0");
    Model mod = m;
    mod.maximize(x % zero);
    CHECK(message_of([&] { solve(mod); }) == "modulo by a term whose only value is 0");

    Model other;
    Var y = other.var("y", 1, 10);
    CHECK(message_of([&] { (void)(x + y); }) == "a term mixes variables of two different models");
    CHECK(message_of([&] { m.add(y <= 3); }) == "the constraint uses variables of another model");
}

TEST_CASE("a divisor that may be 0 is not 0 in any solution") {
    Model m;
    Var x = m.var("x", -6, 6), y = m.var("y", -2, 2);
    m.add(x / y == 3);
    const Result r = solve_all(m);
    CHECK(r.status == Status::AllSolutions);
    for (const Solution& s : r.solutions) {
        CHECK(s[y] != 0);
        CHECK(floor_div(s[x], s[y]) == 3);
    }
    std::size_t expected = 0; // brute force over the same ranges
    for (int xv = -6; xv <= 6; ++xv) {
        for (int yv = -2; yv <= 2; ++yv)
            expected += yv != 0 && floor_div(xv, yv) == 3;
    }
    CHECK(r.solutions.size() == expected);
}

TEST_CASE("node and failure limits stop the search with UNKNOWN and say why") {
    SolveOptions options;
    options.node_limit = 1000;
    const Result r = solve(examples::pigeonhole(11, 10), options);
    CHECK(r.status == Status::Unknown);
    CHECK(r.stop_reason == "node limit 1000 reached");
    CHECK(r.stats.nodes == 1000);
    SolveOptions failures;
    failures.failure_limit = 50;
    const Result f = solve(examples::pigeonhole(11, 10), failures);
    CHECK(f.status == Status::Unknown);
    CHECK(f.stop_reason == "failure limit 50 reached");
}

TEST_CASE("a time limit and cancellation stop a long search") {
    SolveOptions timed;
    timed.time_limit_seconds = 0.2;
    const Result r = solve(examples::pigeonhole(14, 13), timed);
    CHECK(r.status == Status::Unknown);
    CHECK(r.stop_reason.find("time limit") == 0);
    CHECK(r.stats.seconds < 2.0);

    std::atomic<bool> cancel{false};
    SolveOptions cancellable;
    cancellable.cancel = &cancel;
    std::thread stopper([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        cancel = true;
    });
    const Result c = solve(examples::pigeonhole(14, 13), cancellable);
    stopper.join();
    CHECK(c.status == Status::Unknown);
    CHECK(c.stop_reason == "cancelled");
}

TEST_CASE("every variable order and value choice finds the same solution set") {
    auto model = [](Prefer prefer) {
        Model m;
        Var a = m.var("a", 0, 9), b = m.var("b", 0, 9), c = m.var("c", 0, 9);
        m.add(a + b * 2 == c + 3);
        m.add(a != b);
        m.add((c <= 2) | (c >= 8));
        for (const Var& v : {a, b, c})
            m.prefer(v, prefer);
        return m;
    };
    std::set<std::vector<Integer>> reference;
    for (const Solution& s : solve_all(model(Prefer::Min)).solutions)
        reference.insert(s.values());
    REQUIRE(reference.size() > 5);
    for (Prefer prefer : {Prefer::Min, Prefer::Max, Prefer::SplitLow, Prefer::SplitHigh}) {
        for (VarOrder order : {VarOrder::Declaration, VarOrder::SmallestDomain, VarOrder::MostConstrained}) {
            SolveOptions options;
            options.order = order;
            const Result r = solve_all(model(prefer), std::nullopt, options);
            std::set<std::vector<Integer>> found;
            for (const Solution& s : r.solutions)
                found.insert(s.values());
            CAPTURE(to_string(prefer));
            CAPTURE(to_string(order));
            CHECK(found == reference);
            CHECK(found.size() == r.solutions.size());
        }
    }
    // With the declaration order the first answer is the lexicographically first in each direction.
    CHECK(solve(model(Prefer::Min)).solutions[0].values() == *reference.begin());
    CHECK(solve(model(Prefer::Max)).solutions[0].values() == *reference.rbegin());
}

TEST_CASE("lexicographic objectives: the second breaks ties of the first") {
    Model m;
    Var x = m.var("x", 0, 10), y = m.var("y", 0, 10);
    m.add(x + y <= 12);
    m.maximize(min(x, 7));
    m.minimize(y - x);
    const Result r = solve(m);
    REQUIRE(r.status == Status::Optimal);
    CHECK(r.solutions.back()[x] == 10); // min(x, 7) = 7 for x >= 7; then y - x smallest: x = 10, y = 0
    CHECK(r.solutions.back()[y] == 0);
}

TEST_CASE("explanations name a minimal conflicting set of constraints") {
    Model m;
    Var a = m.var("a", 1, 100), b = m.var("b", 1, 100), c = m.var("c", 1, 100);
    m.add(a + b == c, "sum");         // 0
    m.add(c <= 10, "small c");        // 1
    m.add(a >= 1, "irrelevant");      // 2
    m.add(a >= 6, "large a");         // 3
    m.add(b >= 5, "large b");         // 4
    m.add(b != 50, "irrelevant too"); // 5
    const auto conflict = explain_conflict(m);
    REQUIRE(conflict.has_value());
    CHECK(conflict->minimal);
    CHECK(conflict->constraints == std::vector<std::size_t>{0, 1, 3, 4});
    CHECK(m.constraints()[conflict->constraints[1]].origin.text == "small c");
    Model feasible;
    Var f = feasible.var("f", 1, 3);
    feasible.add(f >= 2);
    CHECK_FALSE(explain_conflict(feasible).has_value());
}
