#include "propagators/all_different.hpp"

#include <algorithm>
#include <limits>

namespace constrint::engine {

PropStatus AllDifferent::propagate(Store& s) {
    removed_at_.resize(vars_.size());
    const Store::Stamp now = s.stamp();
    std::vector<std::uint8_t>& done = done_;
    done.resize(vars_.size());
    for (std::size_t i = 0; i < vars_.size(); ++i)
        done[i] = s.on_branch(removed_at_[i]) ? kRemoved : kOpen;
    // Each pass removes the values of the variables fixed since the last one; a removal that fixes a
    // variable makes another pass.
    for (bool progress = true; progress;) {
        progress = false;
        fixed_.clear();
        fixed_words_.clear();
        bool in_words = true;
        for (std::size_t i = 0; i < vars_.size(); ++i) {
            if (done[i] != kOpen || !s.fixed(vars_[i])) continue;
            done[i] = kFixedNow;
            removed_at_[i] = now;
            fixed_.push_back(i);
            Word value = 0, unused = 0;
            in_words = in_words && s.word_bounds(vars_[i], value, unused);
            fixed_words_.push_back(value);
        }
        if (fixed_.empty()) break;
        const PropStatus status = in_words ? remove_fixed_words(s, progress) : remove_fixed(s, progress);
        if (status == PropStatus::Fail) return status;
        for (std::size_t i : fixed_)
            done[i] = kRemoved;
    }
    // Pigeonhole over the hull of the open variables: n variables need n values. In words while every
    // bound fits (golomb: the Integer comparisons and subtraction at every run showed in the profile).
    std::size_t open = 0;
    bool hull_fits = true;
    Word hull_lo = std::numeric_limits<Word>::max(), hull_hi = std::numeric_limits<Word>::min();
    for (std::size_t i = 0; i < vars_.size(); ++i) {
        if (done[i] != kOpen) continue;
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
        if (done[i] != kOpen) continue;
        if (!lo || s.min(vars_[i]) < *lo) lo = &s.min(vars_[i]);
        if (!hi || s.max(vars_[i]) > *hi) hi = &s.max(vars_[i]);
    }
    return *hi - *lo + 1 < open ? PropStatus::Fail : PropStatus::Ok;
}

PropStatus AllDifferent::remove_fixed_words(Store& s, bool& fixed_more) {
    // Two variables fixed to one value (or one variable listed twice) fail.
    std::sort(fixed_words_.begin(), fixed_words_.end());
    if (std::adjacent_find(fixed_words_.begin(), fixed_words_.end()) != fixed_words_.end())
        return PropStatus::Fail;
    // Each open variable once, for all the values within its bounds (golomb: walking every other
    // variable once per fixed one, with its bounds loaded each time, was a tenth of the run).
    for (std::size_t j = 0; j < vars_.size(); ++j) {
        if (done_[j] != kOpen) continue;
        const VarId x = vars_[j];
        Word lo = 0, hi = 0;
        if (!s.word_bounds(x, lo, hi)) {
            lo = std::numeric_limits<Word>::min();
            hi = std::numeric_limits<Word>::max();
        }
        for (auto v = std::lower_bound(fixed_words_.begin(), fixed_words_.end(), lo);
             v != fixed_words_.end() && *v <= hi; ++v) {
            if (!s.remove_word(x, *v)) return PropStatus::Fail;
        }
        if (s.fixed(x)) fixed_more = true;
    }
    return PropStatus::Ok;
}

PropStatus AllDifferent::remove_fixed(Store& s, bool& fixed_more) {
    for (std::size_t k = 0; k < fixed_.size(); ++k) {
        const VarId fixed = vars_[fixed_[k]];
        // Read in place: only open variables' domains change below.
        const Integer& value = s.value(fixed);
        for (std::size_t other = k + 1; other < fixed_.size(); ++other) {
            const VarId y = vars_[fixed_[other]];
            if (y == fixed || s.value(y) == value) return PropStatus::Fail;
        }
        for (std::size_t j = 0; j < vars_.size(); ++j) {
            if (done_[j] != kOpen) continue;
            if (!s.remove(vars_[j], value)) return PropStatus::Fail;
            if (s.fixed(vars_[j])) fixed_more = true;
        }
    }
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
