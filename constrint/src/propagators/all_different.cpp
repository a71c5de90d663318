#include "propagators/all_different.hpp"

#include <algorithm>

namespace constrint::engine {

PropStatus AllDifferent::propagate(Store& s) {
    // Removing a value can fix another variable: repeat until no new variable is fixed.
    removed_at_.resize(vars_.size());
    const Store::Stamp now = s.stamp();
    std::vector<std::uint8_t>& done = done_;
    done.resize(vars_.size());
    for (std::size_t i = 0; i < vars_.size(); ++i)
        done[i] = s.on_branch(removed_at_[i]);
    for (bool progress = true; progress;) {
        progress = false;
        for (std::size_t i = 0; i < vars_.size(); ++i) {
            if (done[i] || !s.fixed(vars_[i])) continue;
            done[i] = true;
            removed_at_[i] = now;
            progress = true;
            // Read in place: only other variables' domains change below (a repeated variable fails first).
            const Integer& value = s.value(vars_[i]);
            Word word = 0, unused = 0;
            const bool value_fits = s.word_bounds(vars_[i], word, unused);
            for (std::size_t j = 0; j < vars_.size(); ++j) {
                // A done variable is fixed to a value that already left every other domain (here or
                // at an ancestor), so it cannot hold this one.
                if (j == i || (done[j] && vars_[j] != vars_[i])) continue;
                if (vars_[j] == vars_[i]) return PropStatus::Fail;
                // Outside the other's word bounds: nothing to remove, no call into the store (golomb:
                // most removals).
                if (Word lo = 0, hi = 0;
                    value_fits && s.word_bounds(vars_[j], lo, hi) && (word < lo || word > hi))
                    continue;
                if (!s.remove(vars_[j], value)) return PropStatus::Fail;
            }
        }
    }
    // Pigeonhole over the hull of the open variables: n variables need n values.
    std::size_t open = 0;
    const Integer* lo = nullptr;
    const Integer* hi = nullptr;
    for (std::size_t i = 0; i < vars_.size(); ++i) {
        if (done[i]) continue;
        ++open;
        if (!lo || s.min(vars_[i]) < *lo) lo = &s.min(vars_[i]);
        if (!hi || s.max(vars_[i]) > *hi) hi = &s.max(vars_[i]);
    }
    if (open == 0) return PropStatus::Subsumed;
    if (*hi - *lo + 1 < open) return PropStatus::Fail;
    return PropStatus::Ok;
}

Entailment AllDifferent::entailment(const Store& s) const {
    std::vector<Integer> values;
    values.reserve(vars_.size());
    for (VarId x : vars_) {
        if (!s.fixed(x)) return Entailment::Unknown;
        values.push_back(s.value(x));
    }
    std::sort(values.begin(), values.end());
    return std::adjacent_find(values.begin(), values.end()) == values.end() ? Entailment::True
                                                                            : Entailment::False;
}

} // namespace constrint::engine
