// The Gecode method for testing propagators: a test states the number of variables, a small domain,
// a plain C++ `solution` predicate and a `post` that adds the constraint to a model; the harness
// checks, exhaustively and on random sub-domains, that
//   (a) every full assignment is decided: a solution survives propagation and is found by search,
//       a non-solution fails propagation or (auxiliary variables left open) search finds nothing;
//   (b) propagation on a sub-domain never removes a value that belongs to a solution, never adds a
//       value, and when it fixes every variable has fixed a solution (with `domain_consistent`: it
//       leaves exactly the supported values);
//   (c) solve_all on the sub-domain produces exactly the solutions, each once.
// Set CONSTRINT_HARNESS_REPORT=1 to print how many cases each run covered.
#pragma once

#include "engine/compile.hpp"
#include "engine/search.hpp"

#include <constrint/constrint.hpp>
#include <doctest/doctest.h>

#include <cstdint>
#include <cstdlib>
#include <functional>
#include <random>
#include <set>
#include <string>
#include <vector>

namespace constrint::testing {

using Assignment = std::vector<Integer>;
using Vars = std::vector<Var>;
using Predicate = std::function<bool(const Assignment&)>;
using Poster = std::function<void(Model&, const Vars&)>;
// Posts an engine propagator straight into the store (the FlatZinc builtins' propagators, which
// have no model constraint): store variable i is the model's variable i.
using NativePoster = std::function<void(engine::Store&, const std::vector<engine::VarId>&)>;

// Reproducible on every standard library (the std distributions are not).
struct Random {
    std::mt19937_64 engine;
    explicit Random(std::uint64_t seed) : engine(seed) {}
    std::uint64_t below(std::uint64_t n) { return engine() % n; }
};

inline std::vector<Integer> interval(long long lo, long long hi) {
    std::vector<Integer> values;
    for (long long v = lo; v <= hi; ++v)
        values.emplace_back(v);
    return values;
}

struct HarnessOptions {
    int random_cases = 300;
    std::uint64_t seed = 1;
    // The constraint is posted without auxiliary variables by a domain-consistent propagator
    // (==, != and member on views): propagation must leave exactly the values that have a
    // support, and fail when there is no solution.
    bool domain_consistent = false;
};

// What a run covered, for the test's report.
struct HarnessCounts {
    std::uint64_t assignments = 0;      // full assignments checked in (a)
    std::uint64_t solutions = 0;        // of which solutions
    std::uint64_t undecided = 0;        // non-solutions that propagation alone did not fail
    std::uint64_t model_errors = 0;     // non-solutions refused by compile (division by a fixed 0)
    std::uint64_t random_cases = 0;     // sub-domain cases checked in (b) and (c)
    std::uint64_t random_solutions = 0; // brute-force solutions over all sub-domain cases
    std::uint64_t failures = 0;         // violated checks
};

namespace detail {

inline std::string show(const Assignment& a) {
    std::string s = "(";
    for (std::size_t i = 0; i < a.size(); ++i)
        s += (i ? ", " : "") + to_string(a[i]);
    return s + ")";
}

inline std::string show(const std::vector<std::vector<Integer>>& domains) {
    std::string s;
    for (std::size_t i = 0; i < domains.size(); ++i) {
        s += i ? " x" : "x";
        s += std::to_string(i);
        s += " in {";
        for (std::size_t j = 0; j < domains[i].size(); ++j)
            s += (j ? ", " : "") + to_string(domains[i][j]);
        s += "}";
    }
    return s;
}

// Calls visit on every assignment of the cartesian product of the domains.
inline void for_each_assignment(const std::vector<std::vector<Integer>>& domains,
                                const std::function<void(const Assignment&)>& visit) {
    for (const auto& d : domains) {
        if (d.empty()) return;
    }
    std::vector<std::size_t> at(domains.size(), 0);
    Assignment a(domains.size());
    for (;;) {
        for (std::size_t i = 0; i < domains.size(); ++i)
            a[i] = domains[i][at[i]];
        visit(a);
        std::size_t i = 0;
        while (i < domains.size() && ++at[i] == domains[i].size())
            at[i++] = 0;
        if (i == domains.size()) return;
    }
}

class Reporter {
  public:
    Reporter(std::string test, HarnessCounts& counts) : test_(std::move(test)), counts_(counts) {}
    void fail(const std::string& what) {
        if (++counts_.failures <= kShown) FAIL_CHECK(test_ << ": " << what);
    }
    ~Reporter() {
        if (counts_.failures > kShown)
            FAIL_CHECK(test_ << ": " << counts_.failures - kShown << " more failures");
    }
    Reporter(const Reporter&) = delete;
    Reporter& operator=(const Reporter&) = delete;

  private:
    static constexpr std::uint64_t kShown = 8;
    std::string test_;
    HarnessCounts& counts_;
};

// The model compiled, with the native propagator (when there is one) posted into its store.
inline std::unique_ptr<engine::Compiled> compile_with(const Model& model, const NativePoster& native) {
    auto compiled = engine::compile(model);
    if (native) {
        std::vector<engine::VarId> ids;
        for (int i = 0; i < static_cast<int>(model.variables().size()); ++i)
            ids.push_back(i);
        native(compiled->store, ids);
    }
    return compiled;
}

// solve (limit 1) or solve_all (no limit), through the engine when the constraint is native.
inline Result solve_with(const Model& model, const NativePoster& native, std::optional<std::uint64_t> limit) {
    if (!native) return limit ? solve(model) : solve_all(model);
    Search search(std::make_shared<const Model>(model), compile_with(model, native), {}, {});
    Result result;
    while (!limit || result.solutions.size() < *limit) {
        auto solution = search.next();
        if (!solution) break;
        result.solutions.push_back(std::move(*solution));
    }
    result.status = search.status();
    return result;
}

// The model with variable i ranging over domains[i] and the constraint posted.
inline Model build(const std::vector<std::vector<Integer>>& domains, const Poster& post, Vars& vars) {
    Model model;
    vars.clear();
    for (std::size_t i = 0; i < domains.size(); ++i) {
        std::string name = "x"; // (not "x" + to_string(i): GCC 12 warns falsely, -Wrestrict)
        name += std::to_string(i);
        vars.push_back(model.var(std::move(name), domains[i]));
    }
    post(model, vars);
    return model;
}

// (a) One full assignment.
inline void check_assignment(const Assignment& a, const Predicate& solution, const Poster& post,
                             const NativePoster& native, Reporter& report, HarnessCounts& counts) {
    ++counts.assignments;
    const bool expected = solution(a);
    counts.solutions += expected;
    std::vector<std::vector<Integer>> fixed;
    for (const Integer& v : a)
        fixed.push_back({v});
    Vars vars;
    const Model model = build(fixed, post, vars);
    bool propagated = false;
    try {
        auto compiled = compile_with(model, native);
        propagated = !compiled->failed && compiled->store.propagate();
    } catch (const ModelError& e) {
        if (expected) report.fail("solution " + show(a) + " refused by compile: " + e.what());
        ++counts.model_errors;
        return;
    }
    const Result result = solve_with(model, native, 1);
    if (expected) {
        if (!propagated) report.fail("solution " + show(a) + " failed by propagation");
        if (result.solutions.size() != 1 || result.solutions[0].values() != a) {
            report.fail("solution " + show(a) + " not found by solve (status " + to_string(result.status) +
                        ")");
        }
    } else {
        counts.undecided += propagated;
        if (!result.solutions.empty()) {
            report.fail("non-solution " + show(a) + " accepted by solve" +
                        (propagated ? " (propagation did not fail)" : " (although propagation failed)"));
        } else if (result.status != Status::Unsatisfiable) {
            report.fail("non-solution " + show(a) + ": solve status " + to_string(result.status));
        }
    }
}

// (b) and (c) One sub-domain case.
inline void check_subdomains(const std::vector<std::vector<Integer>>& domains, const Predicate& solution,
                             const Poster& post, const NativePoster& native, const HarnessOptions& options,
                             Reporter& report, HarnessCounts& counts) {
    ++counts.random_cases;
    std::set<Assignment> expected;
    for_each_assignment(domains, [&](const Assignment& a) {
        if (solution(a)) expected.insert(a);
    });
    counts.random_solutions += expected.size();
    const std::string where = " on " + show(domains);

    Vars vars;
    const Model model = build(domains, post, vars);
    std::unique_ptr<engine::Compiled> compiled;
    try {
        compiled = compile_with(model, native);
    } catch (const ModelError& e) {
        if (!expected.empty())
            report.fail("compile refused a model with solutions" + where + ": " + e.what());
        return;
    }
    const bool propagated = !compiled->failed && compiled->store.propagate();
    if (!propagated) {
        if (!expected.empty()) {
            report.fail("propagation failed although " + show(*expected.begin()) + " is a solution" + where);
        }
    } else {
        const engine::Store& store = compiled->store;
        bool all_fixed = true;
        for (engine::VarId x = 0; x < store.num_vars(); ++x)
            all_fixed = all_fixed && store.fixed(x);
        if (all_fixed) {
            Assignment left;
            for (std::size_t i = 0; i < domains.size(); ++i)
                left.push_back(store.value(static_cast<engine::VarId>(i)));
            if (!expected.count(left)) {
                report.fail("propagation fixed every variable, to the non-solution " + show(left) + where);
            }
        }
        if (options.domain_consistent) {
            if (expected.empty())
                report.fail("propagation did not fail although there is no solution" + where);
            for (std::size_t i = 0; i < domains.size() && !expected.empty(); ++i) {
                std::vector<Integer> supported;
                for (const Assignment& a : expected)
                    supported.push_back(a[i]);
                const Domain& left = store.dom(static_cast<engine::VarId>(i));
                if (!(left == Domain::values(supported))) {
                    report.fail("x" + std::to_string(i) + " keeps values without support" + where +
                                " (left " + left.to_string() + ", supported " +
                                Domain::values(supported).to_string() + ")");
                }
            }
        }
        for (const Assignment& a : expected) {
            for (std::size_t i = 0; i < a.size(); ++i) {
                if (!store.dom(static_cast<engine::VarId>(i)).contains(a[i])) {
                    report.fail("propagation removed x" + std::to_string(i) + " = " + to_string(a[i]) +
                                " of solution " + show(a) + where + " (left " +
                                store.dom(static_cast<engine::VarId>(i)).to_string() + ")");
                }
            }
        }
        for (std::size_t i = 0; i < domains.size(); ++i) {
            Domain gained = store.dom(static_cast<engine::VarId>(i));
            gained.intersect(Domain::values(domains[i]));
            if (!(gained == store.dom(static_cast<engine::VarId>(i)))) {
                report.fail("propagation added values to x" + std::to_string(i) + where + " (now " +
                            store.dom(static_cast<engine::VarId>(i)).to_string() + ")");
            }
        }
    }

    const Result all = solve_with(model, native, std::nullopt);
    std::set<Assignment> found;
    for (const Solution& s : all.solutions) {
        if (!found.insert(s.values()).second)
            report.fail("solve_all returned " + show(s.values()) + " twice" + where);
        if (!expected.count(s.values()))
            report.fail("solve_all returned non-solution " + show(s.values()) + where);
    }
    for (const Assignment& a : expected) {
        if (!found.count(a)) report.fail("solve_all missed solution " + show(a) + where);
    }
    const Status status = expected.empty() ? Status::Unsatisfiable : Status::AllSolutions;
    if (all.status != status) report.fail(std::string("solve_all status ") + to_string(all.status) + where);
}

} // namespace detail

// Runs (a) on every assignment of `domains` (one candidate list per variable) and (b), (c) on
// random non-empty sub-lists of them.
inline HarnessCounts check_propagator(const std::string& name,
                                      const std::vector<std::vector<Integer>>& domains,
                                      const Predicate& solution, const Poster& post,
                                      HarnessOptions options = {}, const NativePoster& native = {}) {
    HarnessCounts counts;
    {
        detail::Reporter report(name, counts);
        detail::for_each_assignment(domains, [&](const Assignment& a) {
            detail::check_assignment(a, solution, post, native, report, counts);
        });
        Random rng(options.seed);
        for (int c = 0; c < options.random_cases; ++c) {
            std::vector<std::vector<Integer>> sub(domains.size());
            for (std::size_t i = 0; i < domains.size(); ++i) {
                // Densities from sparse to nearly full, so that both failure and slack occur.
                const std::uint64_t percent = 15 + rng.below(80);
                for (const Integer& v : domains[i]) {
                    if (rng.below(100) < percent) sub[i].push_back(v);
                }
                if (sub[i].empty()) sub[i].push_back(domains[i][rng.below(domains[i].size())]);
            }
            detail::check_subdomains(sub, solution, post, native, options, report, counts);
        }
    }
    // The coverage of each run, on request (CONSTRINT_HARNESS_REPORT=1): silent in CI.
    if (std::getenv("CONSTRINT_HARNESS_REPORT")) {
        MESSAGE(name << ": " << counts.assignments << " assignments (" << counts.solutions << " solutions, "
                     << counts.undecided << " non-solutions left to search, " << counts.model_errors
                     << " refused by compile), " << counts.random_cases << " sub-domain cases ("
                     << counts.random_solutions << " solutions)");
    }
    CHECK_MESSAGE(counts.failures == 0, name << ": " << counts.failures << " violated checks");
    return counts;
}

// The same checks for a propagator posted straight into the engine's store.
inline HarnessCounts check_native_propagator(const std::string& name,
                                             const std::vector<std::vector<Integer>>& domains,
                                             const Predicate& solution, const NativePoster& native,
                                             HarnessOptions options = {}) {
    return check_propagator(
        name, domains, solution, [](Model&, const Vars&) {}, options, native);
}

inline HarnessCounts check_native_propagator(const std::string& name, int arity,
                                             const std::vector<Integer>& values, const Predicate& solution,
                                             const NativePoster& native, HarnessOptions options = {}) {
    return check_native_propagator(name,
                                   std::vector<std::vector<Integer>>(static_cast<std::size_t>(arity), values),
                                   solution, native, options);
}

// The same small domain for each of `arity` variables.
inline HarnessCounts check_propagator(const std::string& name, int arity, const std::vector<Integer>& values,
                                      const Predicate& solution, const Poster& post,
                                      HarnessOptions options = {}) {
    return check_propagator(name, std::vector<std::vector<Integer>>(static_cast<std::size_t>(arity), values),
                            solution, post, options);
}

} // namespace constrint::testing
