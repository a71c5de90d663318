// FlatZinc models of independent parts (docs/flatzinc.md, "Independent parts"): a part without
// solutions is refuted alone before the search, and every answer is the unsplit search's.
#include <constrint/constrint.hpp>
#include <constrint/flatzinc.hpp>
#include <doctest/doctest.h>

#include "flatzinc_output.hpp"

#include <random>
#include <sstream>
#include <string>

using namespace constrint;

namespace {

std::string run(const std::string& fzn, FlatZincOptions options) {
    std::ostringstream out;
    solve_flatzinc(fzn, "parts.fzn", options, out);
    return out.str();
}

std::uint64_t nodes_of(const std::string& output) {
    const std::string key = "%%%mzn-stat: nodes=";
    const std::size_t at = output.find(key);
    REQUIRE(at != std::string::npos);
    return std::stoull(output.substr(at + key.size()));
}

// `digits` free digits, pairwise different neighbours (9^(digits-1) * 10 solutions), then
// `pigeons` pigeons in `holes` holes, searched in that order (input_order).
std::string digits_and_pigeons(int digits, int pigeons, int holes) {
    std::string fzn, order;
    for (int i = 0; i < digits; ++i) {
        fzn += "var 0..9: a" + std::to_string(i) + " :: output_var;\n";
        order += (order.empty() ? "a" : ", a") + std::to_string(i);
    }
    for (int i = 0; i < pigeons; ++i) {
        fzn += "var 1.." + std::to_string(holes) + ": p" + std::to_string(i) + " :: output_var;\n";
        order += ", p" + std::to_string(i);
    }
    for (int i = 0; i + 1 < digits; ++i)
        fzn += "constraint int_ne(a" + std::to_string(i) + ", a" + std::to_string(i + 1) + ");\n";
    for (int i = 0; i < pigeons; ++i)
        for (int j = i + 1; j < pigeons; ++j)
            fzn += "constraint int_ne(p" + std::to_string(i) + ", p" + std::to_string(j) + ");\n";
    return fzn + "solve :: int_search([" + order + "], input_order, indomain_min, complete) satisfy;\n";
}

FlatZincOptions with(bool split, bool statistics = false) {
    FlatZincOptions options;
    options.split_parts = split;
    options.statistics = statistics;
    return options;
}

} // namespace

TEST_CASE("FlatZinc: a part without solutions is refuted alone") {
    const std::string fzn = digits_and_pigeons(3, 6, 5);
    const std::string split = run(fzn, with(true, true)), whole = run(fzn, with(false, true));
    CHECK(split.rfind("=====UNSATISFIABLE=====\n", 0) == 0);
    CHECK(whole.rfind("=====UNSATISFIABLE=====\n", 0) == 0);
    // Split: the digits' part finds its first solution at once, the pigeons' part is refuted alone.
    // Whole: the pigeons are refuted under each of the digits' 810 solutions.
    MESSAGE("nodes: split " << nodes_of(split) << ", whole " << nodes_of(whole));
    CHECK(nodes_of(split) < 1000);
    CHECK(nodes_of(split) * 100 < nodes_of(whole));
    FlatZincOptions two = with(true, true);
    two.threads = 2;
    CHECK(nodes_of(run(fzn, two)) == nodes_of(split)); // refuted before the threads start
}

TEST_CASE("FlatZinc: with parts that have solutions, -a and -p 2 answer as the unsplit search") {
    const std::string fzn = digits_and_pigeons(3, 4, 4); // 810 * 24 solutions
    FlatZincOptions split = with(true), whole = with(false);
    CHECK(run(fzn, split) == run(fzn, whole));
    split.all_solutions = whole.all_solutions = true;
    const std::string all = run(fzn, whole);
    CHECK(all.find("==========\n") == all.size() - 11);
    std::size_t solutions = 0;
    for (std::size_t at = all.find("----------"); at != std::string::npos;
         at = all.find("----------", at + 1))
        ++solutions;
    CHECK(solutions == 810 * 24);
    CHECK(run(fzn, split) == all);
    // -p 2 prints the same solutions in the order the threads find them (docs/solver.md).
    split.threads = 2;
    const std::string threads = run(fzn, split);
    CHECK(sorted_solutions(threads) == sorted_solutions(all));
    CHECK(threads.find("==========\n") == threads.size() - 11);
    // Optimisation: the optimum is the unsplit one.
    const std::string optimise = "var 1..9: x :: output_var;\nvar 1..9: y :: output_var;\n"
                                 "var 1..9: z :: output_var;\nvar 1..9: w :: output_var;\n"
                                 "constraint int_ne(x, y);\nconstraint int_lin_le([1, 1], [z, w], 7);\n"
                                 "solve maximize z;\n";
    CHECK(run(optimise, with(true)) == run(optimise, with(false)));
}

TEST_CASE("FlatZinc: random models answer the same split or not") {
    // Small models of a few parts, some without solutions: a wrong refutation would show as a
    // difference from the whole search's answers.
    std::mt19937 rng(19);
    int unsatisfiable = 0, refuted_by_a_part = 0;
    for (int round = 0; round < 600; ++round) {
        CAPTURE(round);
        const int n = 3 + static_cast<int>(rng() % 4);
        std::string fzn;
        const auto x = [](int i) { return "x" + std::to_string(i); };
        for (int i = 0; i < n; ++i)
            fzn += "var " + std::to_string(rng() % 2) + ".." + std::to_string(1 + rng() % 3) + ": " + x(i) +
                   " :: output_var;\n";
        if (rng() % 3 == 0) fzn += "var 0..3: alias = " + x(0) + ";\n";
        const int constraints = 1 + static_cast<int>(rng() % 5);
        for (int c = 0; c < constraints; ++c) {
            const std::string a = x(static_cast<int>(rng() % n)), b = x(static_cast<int>(rng() % n));
            const std::string k = std::to_string(rng() % 4);
            switch (rng() % 5) {
            case 0:
                fzn += "constraint int_ne(" + a + ", " + b + ");\n";
                break;
            case 1:
                fzn += "constraint int_le(" + a + ", " + k + ");\n";
                break;
            case 2:
                fzn += "constraint int_lin_eq([1, 1], [" + a + ", " + b + "], " + k + ");\n";
                break;
            case 3:
                fzn +=
                    "constraint int_times(" + a + ", " + b + ", " + x(static_cast<int>(rng() % n)) + ");\n";
                break;
            default:
                fzn += "constraint int_lt(" + a + ", " + b + ");\n";
                break;
            }
        }
        fzn += rng() % 2 ? "solve satisfy;\n" : "solve maximize " + x(0) + ";\n";
        CAPTURE(fzn);
        FlatZincOptions split = with(true), whole = with(false);
        split.all_solutions = whole.all_solutions = true;
        const std::string answer = run(fzn, whole);
        CHECK(run(fzn, split) == answer);
        if (answer == "=====UNSATISFIABLE=====\n") {
            ++unsatisfiable;
            // Refuted by a part's search (the node counts differ from the whole search's) or not.
            split.statistics = whole.statistics = true;
            if (nodes_of(run(fzn, split)) != nodes_of(run(fzn, whole))) ++refuted_by_a_part;
        }
    }
    CHECK(unsatisfiable >= 100);
    CHECK(refuted_by_a_part >= 10); // most fail at the root, split or not
    MESSAGE("unsatisfiable random FlatZinc models: " << unsatisfiable
                                                     << ", refuted by a part first: " << refuted_by_a_part);
}
