#include "constrint/explain.hpp"

#include "engine/constraint_graph.hpp"
#include "engine/search.hpp"

#include <algorithm>
#include <chrono>

namespace constrint {

namespace {

enum class Verdict { Unsatisfiable, Satisfiable, Unknown };

Verdict check(const Model& model, const std::vector<bool>& active, const SolveOptions& options,
              Conflict& tally) {
    Search search(model, options, active, /*with_objectives=*/false);
    const bool found = search.next().has_value();
    ++tally.checks;
    tally.nodes += search.stats().nodes;
    if (found) return Verdict::Satisfiable;
    return search.status() == Status::Unsatisfiable ? Verdict::Unsatisfiable : Verdict::Unknown;
}

// The independent parts of the model over its declared domains (not the root's: with no propagation
// between the parts, the model is unsatisfiable exactly when one part is, and a minimal conflict of
// that part is one of the model). Parts without constraints are left out; nothing when the model
// does not split.
std::vector<engine::Part> parts_of(const Model& model, const std::vector<Domain>& declared) {
    Model satisfaction = model; // objectives join parts; the checks ignore them
    satisfaction.clear_objectives();
    std::vector<engine::Part> parts = engine::independent_parts(satisfaction, declared);
    std::erase_if(parts, [](const engine::Part& p) { return p.constraints.empty(); });
    if (parts.size() < 2) return {};
    return parts;
}

} // namespace

// Deletion filter: drop each constraint in turn and keep it out when the rest is still
// unsatisfiable. What remains is unsatisfiable, and minimal when every check was decided. With
// split_parts the filter runs over the first part found unsatisfiable only.
std::optional<Conflict> explain_conflict(const Model& model, SolveOptions per_check,
                                         std::optional<double> total_seconds) {
    const auto start = std::chrono::steady_clock::now();
    const std::optional<double> per_check_seconds = per_check.time_limit_seconds;
    // The limits of the next check: its own, cut to what is left of the total; false when none is.
    const auto next_check_limits = [&] {
        if (!total_seconds) return true;
        const double left =
            *total_seconds - std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        if (left <= 0) return false;
        per_check.time_limit_seconds = per_check_seconds ? std::min(*per_check_seconds, left) : left;
        return true;
    };
    const std::size_t n = model.constraints().size();
    Conflict conflict;
    std::optional<Model> part_model;     // the failing part alone, when the model splits
    std::vector<std::size_t> candidates; // the constraints the filter tries to drop
    std::vector<bool> active(n, false);
    bool undecided_part = false;
    std::vector<Domain> declared;
    for (const VariableInfo& v : model.variables())
        declared.push_back(v.domain);
    const bool splittable = per_check.split_parts && std::ranges::none_of(declared, &Domain::empty);
    const std::vector<engine::Part> parts =
        splittable ? parts_of(model, declared) : std::vector<engine::Part>{};
    for (const engine::Part& part : parts) {
        if (!next_check_limits()) return std::nullopt;
        std::fill(active.begin(), active.end(), false);
        for (std::size_t c : part.constraints)
            active[c] = true;
        Model candidate = engine::with_other_parts_fixed(model, part, declared);
        const Verdict verdict = check(candidate, active, per_check, conflict);
        if (verdict == Verdict::Unsatisfiable) {
            part_model = std::move(candidate);
            candidates = part.constraints;
            break;
        }
        if (verdict == Verdict::Unknown) undecided_part = true;
    }
    if (!part_model) {
        // Every part has a solution: so has the model. Otherwise the whole model is filtered.
        if (!parts.empty() && !undecided_part) return std::nullopt;
        candidates.resize(n);
        for (std::size_t i = 0; i < n; ++i)
            candidates[i] = i;
        std::fill(active.begin(), active.end(), true);
        if (!next_check_limits() || check(model, active, per_check, conflict) != Verdict::Unsatisfiable)
            return std::nullopt;
    }
    const Model& checked = part_model ? *part_model : model;
    conflict.minimal = true;
    for (std::size_t i : candidates) {
        if (!next_check_limits()) { // the rest stays in the set, unproven
            conflict.minimal = false;
            break;
        }
        active[i] = false;
        const Verdict verdict = check(checked, active, per_check, conflict);
        if (verdict != Verdict::Unsatisfiable) {
            active[i] = true; // needed (or undecided within the limits)
            if (verdict == Verdict::Unknown) conflict.minimal = false;
        }
    }
    for (std::size_t i : candidates) {
        if (active[i]) conflict.constraints.push_back(i);
    }
    return conflict;
}

} // namespace constrint
