#include "flatzinc/parts.hpp"

#include "engine/search.hpp"

#include <algorithm>
#include <chrono>
#include <map>
#include <numeric>

namespace constrint::flatzinc {

namespace {

// Parts beyond this many join the last one (always sound), so that a model of many small parts is
// not built again once per part.
constexpr std::size_t kMaxParts = 16;

// Store variables joined by the propagators they share (fixed ones join nothing), as a union-find.
class Components {
  public:
    explicit Components(int variables) : parent_(static_cast<std::size_t>(variables)) {
        std::iota(parent_.begin(), parent_.end(), 0);
    }
    int find(int v) {
        while (parent_[v] != v)
            v = parent_[v] = parent_[parent_[v]];
        return v;
    }
    void join(int a, int b) { parent_[find(a)] = find(b); }

  private:
    std::vector<int> parent_;
};

struct Parts {
    std::vector<std::vector<bool>> constraints; // per part: its constraint items
    std::vector<int> part_of_variable;          // per model variable: its part, or -1 (none)
};

// The parts of the whole model's propagator graph over the domains as built (not propagated: the
// store is the search's). A constraint item whose propagators touch no unfixed variable is in no
// part (leaving it out of a part's search only makes that search more permissive).
Parts parts_of(const Program& program) {
    engine::Store& store = program.compiled->store;
    Components components(store.num_vars());
    const auto first_unfixed = [&](int propagator) -> int {
        for (const engine::Subscription& s : store.propagator(propagator).subscriptions())
            if (!store.fixed(s.var)) return s.var;
        return -1;
    };
    for (int p = 0; p < store.num_propagators(); ++p) {
        const int first = first_unfixed(p);
        if (first < 0) continue;
        for (const engine::Subscription& s : store.propagator(p).subscriptions())
            if (!store.fixed(s.var)) components.join(first, s.var);
    }
    Parts parts;
    std::map<int, int> part_of_root;
    const std::size_t items = program.constraint_propagators.size();
    for (std::size_t c = 0; c < items; ++c) {
        const auto [begin, end] = program.constraint_propagators[c];
        int variable = -1;
        for (int p = begin; p < end && variable < 0; ++p)
            variable = first_unfixed(p);
        if (variable < 0) continue;
        const auto [it, added] =
            part_of_root.emplace(components.find(variable), static_cast<int>(parts.constraints.size()));
        if (added) parts.constraints.emplace_back(items, false);
        parts.constraints[it->second][c] = true;
    }
    // Beyond kMaxParts: into the last one.
    const int last = static_cast<int>(kMaxParts) - 1;
    for (std::size_t k = kMaxParts; k < parts.constraints.size(); ++k) {
        for (std::size_t c = 0; c < items; ++c)
            if (parts.constraints[k][c]) parts.constraints[last][c] = true;
    }
    if (parts.constraints.size() > kMaxParts) parts.constraints.resize(kMaxParts);
    for (auto& [root, part] : part_of_root)
        part = std::min(part, last);
    const int model_variables = static_cast<int>(program.model->variables().size());
    parts.part_of_variable.assign(static_cast<std::size_t>(model_variables), -1);
    for (int v = 0; v < model_variables; ++v) {
        if (store.fixed(v)) continue;
        const auto it = part_of_root.find(components.find(v));
        if (it != part_of_root.end()) parts.part_of_variable[v] = it->second;
    }
    return parts;
}

} // namespace

PartsCheck check_parts(const Ast& ast, const std::string& file, Deadline& deadline, bool free_search,
                       const Program& program, const SolveOptions& options) {
    PartsCheck check;
    const engine::Store& store = program.compiled->store;
    for (int v = 0; v < store.num_vars(); ++v)
        if (store.dom(v).empty()) return check; // the search fails at once
    const Parts parts = parts_of(program);
    if (parts.constraints.size() < 2) return check;
    const auto start = std::chrono::steady_clock::now();
    for (std::size_t k = 0; k < parts.constraints.size(); ++k) {
        // The part's variables keep their domains; the others are fixed (none of the part's
        // constraints mentions them), so that its search does not go through their values.
        PartOnly only{parts.constraints[k], {}};
        for (std::size_t v = 0; v < parts.part_of_variable.size(); ++v) {
            const Domain& d = store.dom(static_cast<engine::VarId>(v));
            only.domains.push_back(
                parts.part_of_variable[v] == static_cast<int>(k) ? d : Domain::single(d.min()));
        }
        Program part = Builder(ast, file, deadline).build(free_search, &only);
        SolveOptions per_part = options;
        per_part.threads = 1;
        per_part.solution_limit.reset();
        if (options.time_limit_seconds) {
            const double spent =
                std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
            if (spent >= *options.time_limit_seconds) return check;
            per_part.time_limit_seconds = *options.time_limit_seconds - spent;
        }
        Search search(part.model, std::move(part.compiled), per_part, std::move(part.phases));
        const bool found = search.next().has_value();
        const Stats& s = search.stats();
        check.stats.nodes += s.nodes;
        check.stats.failures += s.failures;
        check.stats.propagations += s.propagations;
        check.stats.max_depth = std::max(check.stats.max_depth, s.max_depth);
        check.stats.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        if (found) continue;
        check.unsatisfiable = search.status() == Status::Unsatisfiable;
        return check; // no solution, or a limit: the search decides the rest
    }
    return check;
}

} // namespace constrint::flatzinc
