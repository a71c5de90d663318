#include "propagators/all_different.hpp"

#include <algorithm>
#include <limits>

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
    // Pigeonhole over the hull of the open variables: n variables need n values. In words while every
    // bound fits (golomb: the Integer comparisons and subtraction at every run showed in the profile).
    std::size_t open = 0;
    bool hull_fits = true;
    Word hull_lo = std::numeric_limits<Word>::max(), hull_hi = std::numeric_limits<Word>::min();
    for (std::size_t i = 0; i < vars_.size(); ++i) {
        if (done[i]) continue;
        ++open;
        Word lo = 0, hi = 0;
        hull_fits = hull_fits && s.word_bounds(vars_[i], lo, hi);
        hull_lo = std::min(hull_lo, lo);
        hull_hi = std::max(hull_hi, hi);
    }
    if (open == 0) return PropStatus::Subsumed;
    if (hull_fits) // hi - lo as an unsigned word is exact (at most 2^64 - 1): no overflow
        return static_cast<std::uint64_t>(hull_hi) - static_cast<std::uint64_t>(hull_lo) < open - 1
                   ? PropStatus::Fail
                   : PropStatus::Ok;
    const Integer* lo = nullptr;
    const Integer* hi = nullptr;
    for (std::size_t i = 0; i < vars_.size(); ++i) {
        if (done[i]) continue;
        if (!lo || s.min(vars_[i]) < *lo) lo = &s.min(vars_[i]);
        if (!hi || s.max(vars_[i]) > *hi) hi = &s.max(vars_[i]);
    }
    return *hi - *lo + 1 < open ? PropStatus::Fail : PropStatus::Ok;
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
