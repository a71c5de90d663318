#include "constrint/explain.hpp"

#include "engine/search.hpp"

namespace constrint {

namespace {

enum class Verdict { Unsatisfiable, Satisfiable, Unknown };

Verdict check(const Model& model, const std::vector<bool>& active, const SolveOptions& options) {
    Search search(model, options, active, /*with_objectives=*/false);
    if (search.next()) return Verdict::Satisfiable;
    return search.status() == Status::Unsatisfiable ? Verdict::Unsatisfiable : Verdict::Unknown;
}

} // namespace

// Deletion filter: drop each constraint in turn and keep it out when the rest is still
// unsatisfiable. What remains is unsatisfiable, and minimal when every check was decided.
std::optional<Conflict> explain_conflict(const Model& model, SolveOptions per_check) {
    const std::size_t n = model.constraints().size();
    std::vector<bool> active(n, true);
    if (check(model, active, per_check) != Verdict::Unsatisfiable) return std::nullopt;
    Conflict conflict;
    conflict.minimal = true;
    for (std::size_t i = 0; i < n; ++i) {
        active[i] = false;
        const Verdict verdict = check(model, active, per_check);
        if (verdict != Verdict::Unsatisfiable) {
            active[i] = true; // needed (or undecided within the limits)
            if (verdict == Verdict::Unknown) conflict.minimal = false;
        }
    }
    for (std::size_t i = 0; i < n; ++i) {
        if (active[i]) conflict.constraints.push_back(i);
    }
    return conflict;
}

} // namespace constrint
