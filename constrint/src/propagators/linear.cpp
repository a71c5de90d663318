#include "propagators/linear.hpp"

#include <algorithm>

namespace constrint::engine {

namespace {

Integer term_min(const Store& s, const LinearTerm& t) {
    return t.coefficient * (t.coefficient > 0 ? s.min(t.var) : s.max(t.var));
}
Integer term_max(const Store& s, const LinearTerm& t) {
    return t.coefficient * (t.coefficient > 0 ? s.max(t.var) : s.min(t.var));
}

Integer sum_min(const Store& s, const std::vector<LinearTerm>& terms) {
    Integer total = 0;
    for (const LinearTerm& t : terms)
        total += term_min(s, t);
    return total;
}

Integer sum_max(const Store& s, const std::vector<LinearTerm>& terms) {
    Integer total = 0;
    for (const LinearTerm& t : terms)
        total += term_max(s, t);
    return total;
}

// coefficient * x <= bound.
bool restrict_term_at_most(Store& s, const LinearTerm& t, const Integer& bound) {
    return t.coefficient > 0 ? s.set_max(t.var, floor_div(bound, t.coefficient))
                             : s.set_min(t.var, ceil_div(bound, t.coefficient));
}

// coefficient * x >= bound.
bool restrict_term_at_least(Store& s, const LinearTerm& t, const Integer& bound) {
    return t.coefficient > 0 ? s.set_min(t.var, ceil_div(bound, t.coefficient))
                             : s.set_max(t.var, floor_div(bound, t.coefficient));
}

} // namespace

Linear::Linear(std::vector<LinearTerm> terms, LinearRelation relation, Integer constant)
    : terms_(std::move(terms)), relation_(relation), constant_(std::move(constant)) {
    Integer divisor = 0;
    for (const LinearTerm& t : terms_) {
        divisor = gcd(divisor, t.coefficient);
        if (Word c = 0; read_word(t.coefficient, c)) word_coefficients_.push_back(c);
    }
    no_solution_by_gcd_ = relation_ == LinearRelation::Eq && divisor > 1 && constant_ % divisor != 0;
    scratch_lo_.resize(terms_.size());
    scratch_hi_.resize(terms_.size());
    if (Word c = 0; word_coefficients_.size() == terms_.size() && read_word(constant_, c))
        word_constant_ = c;
    else
        word_coefficients_.clear();
    unit_coefficients_ =
        !word_coefficients_.empty() && std::all_of(word_coefficients_.begin(), word_coefficients_.end(),
                                                   [](Word c) { return c == 1 || c == -1; });
    std::vector<VarId> vars;
    for (const LinearTerm& t : terms_)
        vars.push_back(t.var);
    std::sort(vars.begin(), vars.end());
    distinct_vars_ = std::adjacent_find(vars.begin(), vars.end()) == vars.end();
}

std::optional<PropStatus> Linear::propagate_words(Store& s) {
    if (!word_constant_) return std::nullopt;
    // Three terms of coefficient 1 or -1 (golomb's differences d = m_j - m_i, most of its runs) with
    // the loops unrolled and no products: the same steps in the same order.
    if (unit_coefficients_ && terms_.size() == 3) return propagate_words_of<3, true>(s);
    return propagate_words_of<0, false>(s);
}

// Every step is checked: a product, sum or difference that does not fit a word ends the run here and
// the Integer path starts over from the bounds narrowed so far (each narrowing made here is one the
// Integer path would make too). kTerms: the number of terms when fixed at compile time (0: any);
// kUnit: every coefficient is 1 or -1.
template <std::size_t kTerms, bool kUnit> std::optional<PropStatus> Linear::propagate_words_of(Store& s) {
    const Word constant = *word_constant_;
    const std::size_t n = kTerms != 0 ? kTerms : terms_.size();
    // Each term's contribution range [lo, hi], kept up to date as bounds move.
    // Plain pointers held in registers: through the members they were reloaded after every store call.
    Word* const lo = scratch_lo_.data();
    Word* const hi = scratch_hi_.data();
    const Word* const coefficients = word_coefficients_.data();
    const LinearTerm* const terms = terms_.data();
    const auto load = [&](std::size_t i) {
        Word x = 0, y = 0;
        const Word c = coefficients[i];
        if (!s.word_bounds(terms[i].var, x, y)) return false;
        if (c < 0) std::swap(x, y);
        if constexpr (kUnit) {
            if (c > 0) {
                lo[i] = x;
                hi[i] = y;
                return true;
            }
            return subtract_word(0, x, lo[i]) && subtract_word(0, y, hi[i]);
        }
        return multiply_word(c, x, lo[i]) && multiply_word(c, y, hi[i]);
    };
    Word sum_lo = 0, sum_hi = 0;
    for (std::size_t i = 0; i < n; ++i) {
        if (!load(i) || !add_word(sum_lo, lo[i], sum_lo) || !add_word(sum_hi, hi[i], sum_hi))
            return std::nullopt;
    }
    // coefficient * x <= bound (at_most) or >= bound; reloads the term and the sums. Nothing when a
    // step does not fit a word, else whether the variable kept a value.
    const auto narrow = [&](std::size_t i, Word bound, bool at_most) -> std::optional<bool> {
        const Word c = coefficients[i];
        const bool upper = (c > 0) == at_most; // which bound of x moves
        Word v = bound;                        // unit coefficients (most terms) need no division
        const bool computed = c == 1               ? true
                              : c == -1            ? subtract_word(0, bound, v)
                              : at_most == (c > 0) ? floor_div_word(bound, c, v)
                                                   : ceil_div_word(bound, c, v);
        if (!computed) return std::nullopt;
        const VarId x = terms[i].var;
        if (!(upper ? s.set_max_word(x, v) : s.set_min_word(x, v))) return false;
        if (!subtract_word(sum_lo, lo[i], sum_lo) || !subtract_word(sum_hi, hi[i], sum_hi) || !load(i) ||
            !add_word(sum_lo, lo[i], sum_lo) || !add_word(sum_hi, hi[i], sum_hi))
            return std::nullopt;
        return true;
    };
    // The passes alternate: sum <= constant lowers maxima (sum_hi moves), sum >= constant raises minima
    // (sum_lo moves). With distinct variables a pass reads only the sum the other one moves, so once a
    // pass after the first two changes nothing, the next one would find what it found last time: the
    // fixpoint is reached (golomb: a third of the passes were such repeats).
    // With unit coefficients a pass of each reaches it, unless a raised minimum landed above the
    // bound asked for (a hole): after the <= pass every term's width w_i is at most S_u = constant -
    // sum_lo, so the >= pass (slack S_l = sum_hi - constant = sum w - S_u) leaves widths min(w_i, S_l)
    // and S_u - sum max(0, w_i - S_l) for the next <= pass, which is never below min(w_j, S_l) since
    // S_l <= sum over i != j of min(w_i, S_l). The confirming third pass is skipped then.
    int rounds = 0;
    for (;; ++rounds) {
        if (rounds == kRoundsPerRun) { // creeping: continue in a later run, after a limit check
            s.reschedule_running();
            return PropStatus::Ok;
        }
        bool at_most_changed = false;
        if (sum_lo > constant) return PropStatus::Fail;
        for (std::size_t i = 0; i < n; ++i) { // sum <= constant: hi[i] <= constant - (sum_lo - lo[i])
            Word others = 0, cap = 0;
            if (!subtract_word(sum_lo, lo[i], others) || !subtract_word(constant, others, cap))
                return std::nullopt;
            if (hi[i] <= cap) continue;
            const std::optional<bool> kept = narrow(i, cap, true);
            if (!kept) return std::nullopt;
            if (!*kept) return PropStatus::Fail;
            at_most_changed = true;
        }
        if (relation_ != LinearRelation::Eq) break; // Le: one pass reaches the fixpoint
        if (distinct_vars_ && rounds > 0 && !at_most_changed) break;
        bool at_least_changed = false, landed_above = false;
        if (sum_hi < constant) return PropStatus::Fail;
        for (std::size_t i = 0; i < n; ++i) { // sum >= constant: lo[i] >= constant - (sum_hi - hi[i])
            Word others = 0, floor = 0;
            if (!subtract_word(sum_hi, hi[i], others) || !subtract_word(constant, others, floor))
                return std::nullopt;
            if (lo[i] >= floor) continue;
            const std::optional<bool> kept = narrow(i, floor, false);
            if (!kept) return std::nullopt;
            if (!*kept) return PropStatus::Fail;
            at_least_changed = true;
            landed_above = landed_above || lo[i] > floor;
        }
        if (!at_least_changed && (distinct_vars_ || !at_most_changed)) break;
        if (unit_coefficients_ && distinct_vars_ && !landed_above) break;
    }
    if (relation_ == LinearRelation::Le) return sum_hi <= constant ? PropStatus::Subsumed : PropStatus::Ok;
    return sum_lo == sum_hi ? (sum_lo == constant ? PropStatus::Subsumed : PropStatus::Fail) : PropStatus::Ok;
}

// sum <= constant: each term is at most constant minus the others' minimum.
PropStatus Linear::propagate_le(Store& s, bool& changed) {
    const Integer lowest = sum_min(s, terms_);
    if (lowest > constant_) return PropStatus::Fail;
    const Integer slack = constant_ - lowest;
    for (const LinearTerm& t : terms_) {
        const Integer current = term_min(s, t);
        if (term_max(s, t) - current <= slack) continue;
        if (!restrict_term_at_most(s, t, current + slack)) return PropStatus::Fail;
        changed = true;
    }
    return PropStatus::Ok;
}

// sum >= constant.
PropStatus Linear::propagate_ge(Store& s, bool& changed) {
    const Integer highest = sum_max(s, terms_);
    if (highest < constant_) return PropStatus::Fail;
    const Integer slack = highest - constant_;
    for (const LinearTerm& t : terms_) {
        const Integer current = term_max(s, t);
        if (current - term_min(s, t) <= slack) continue;
        if (!restrict_term_at_least(s, t, current - slack)) return PropStatus::Fail;
        changed = true;
    }
    return PropStatus::Ok;
}

PropStatus Linear::propagate_ne(Store& s) {
    const LinearTerm* open = nullptr;
    Integer fixed_sum = 0;
    for (const LinearTerm& t : terms_) {
        if (s.fixed(t.var)) {
            fixed_sum += t.coefficient * s.value(t.var);
        } else if (open) {
            return PropStatus::Ok; // two unfixed variables: anything may still hold
        } else {
            open = &t;
        }
    }
    if (!open) return fixed_sum != constant_ ? PropStatus::Subsumed : PropStatus::Fail;
    const Integer rest = constant_ - fixed_sum;
    if (rest % open->coefficient != 0) return PropStatus::Subsumed;
    return s.remove(open->var, rest / open->coefficient) ? PropStatus::Subsumed : PropStatus::Fail;
}

PropStatus Linear::propagate(Store& s) {
    if (relation_ == LinearRelation::Ne) return propagate_ne(s);
    if (no_solution_by_gcd_) return PropStatus::Fail;
    if (const std::optional<PropStatus> status = propagate_words(s)) return *status;
    bool changed = false;
    if (propagate_le(s, changed) == PropStatus::Fail) return PropStatus::Fail;
    if (relation_ == LinearRelation::Eq) {
        // Holes and rounding can make one pass leave slack: repeat while a bound moves.
        int rounds = 0;
        do {
            if (++rounds > kRoundsPerRun) { // creeping: continue in a later run, after a limit check
                s.reschedule_running();
                return PropStatus::Ok;
            }
            changed = false;
            if (propagate_ge(s, changed) == PropStatus::Fail) return PropStatus::Fail;
            if (!changed) break;
            changed = false;
            if (propagate_le(s, changed) == PropStatus::Fail) return PropStatus::Fail;
        } while (changed);
    }
    return settle(entailment(s)) == PropStatus::Subsumed ? PropStatus::Subsumed : PropStatus::Ok;
}

Entailment Linear::entailment(const Store& s) const {
    const Integer lowest = sum_min(s, terms_), highest = sum_max(s, terms_);
    switch (relation_) {
    case LinearRelation::Le:
        if (highest <= constant_) return Entailment::True;
        return lowest > constant_ ? Entailment::False : Entailment::Unknown;
    case LinearRelation::Eq:
        if (lowest > constant_ || highest < constant_) return Entailment::False;
        return lowest == highest ? Entailment::True : Entailment::Unknown;
    case LinearRelation::Ne:
        if (lowest > constant_ || highest < constant_) return Entailment::True;
        return lowest == highest ? Entailment::False : Entailment::Unknown;
    }
    return Entailment::Unknown;
}

std::vector<Subscription> Linear::subscriptions() const {
    const Event event = relation_ == LinearRelation::Ne ? Event::Fixed : Event::Bounds;
    std::vector<Subscription> subs;
    subs.reserve(terms_.size());
    for (const LinearTerm& t : terms_)
        subs.push_back({t.var, event});
    return subs;
}

} // namespace constrint::engine
