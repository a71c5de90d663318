#include "constrint/explain.hpp"

#include "engine/search.hpp"

#include <algorithm>
#include <chrono>

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
    std::vector<bool> active(n, true);
    if (!next_check_limits() || check(model, active, per_check) != Verdict::Unsatisfiable)
        return std::nullopt;
    Conflict conflict;
    conflict.minimal = true;
    for (std::size_t i = 0; i < n; ++i) {
        if (!next_check_limits()) { // the rest stays in the set, unproven
            conflict.minimal = false;
            break;
        }
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
