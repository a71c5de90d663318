#include "propagators/cardinality_sums.hpp"

#include <algorithm>

namespace constrint::engine {

CardinalitySums::CardinalitySums(std::vector<VarId> vars, std::vector<Integer> values,
                                 std::vector<VarId> counts)
    : vars_(std::move(vars)), values_(std::move(values)), counts_(std::move(counts)),
      value_set_(Domain::values(values_)) {}

CardinalitySums::Contribution CardinalitySums::contribution(const Domain& d) const {
    std::optional<Integer> lo, hi;
    bool inside;
    if (value_set_.interval_count() == 1 && value_set_.modulus() == 1) { // V is a range: no copy
        const Integer &a = value_set_.min(), &b = value_set_.max();
        inside = a <= d.min() && d.max() <= b;
        if (inside) return {1, 1, d.min(), d.max(), true};
        lo = d.next_at_least(a);
        hi = d.prev_at_most(b);
        if (lo && *lo > b) lo.reset();
    } else {
        Domain common = d;
        common.intersect(value_set_);
        inside = common.size() == d.size();
        if (inside) return {1, 1, d.min(), d.max(), true};
        if (!common.empty()) lo = common.min(), hi = common.max();
    }
    if (!lo) return {0, 0, 0, 0, false};
    return {0, 1, std::min(Integer(0), *lo), std::max(Integer(0), *hi), false};
}

PropStatus CardinalitySums::propagate(Store& s) {
    scratch_.clear();
    Integer in_lo = 0, in_hi = 0, sum_lo = 0, sum_hi = 0;
    for (VarId x : vars_) {
        scratch_.push_back(contribution(s.dom(x)));
        const Contribution& c = scratch_.back();
        in_lo += c.in_lo;
        in_hi += c.in_hi;
        sum_lo += c.lo;
        sum_hi += c.hi;
    }

    // sum_k c_k == the number of x_j in V, which lies in [in_lo, in_hi].
    Integer count_lo = 0, count_hi = 0;
    for (VarId c : counts_) {
        count_lo += s.min(c);
        count_hi += s.max(c);
    }
    if (count_lo > in_hi || count_hi < in_lo) return PropStatus::Fail;
    for (VarId c : counts_) {
        const Integer lo = in_lo - (count_hi - s.max(c)), hi = in_hi - (count_lo - s.min(c));
        if (!s.set_bounds(c, lo, hi)) return PropStatus::Fail;
    }
    // Every x_j that may be in V has to be (the counts need them all), or none may.
    if (count_lo == in_hi || count_hi == in_lo) {
        const bool all_in = count_lo == in_hi;
        const bool is_range = value_set_.interval_count() == 1 && value_set_.modulus() == 1;
        for (std::size_t j = 0; j < vars_.size(); ++j) {
            if (scratch_[j].in_lo == scratch_[j].in_hi) continue;
            if (all_in ? !s.intersect(vars_[j], value_set_)
                       : is_range && !s.remove_range(vars_[j], value_set_.min(), value_set_.max()))
                return PropStatus::Fail;
        }
    }

    // sum_k v_k * c_k == the sum of the x_j in V, which lies in [sum_lo, sum_hi].
    Integer weighted_lo = 0, weighted_hi = 0;
    const auto term_lo = [&](std::size_t k) {
        return values_[k] * (values_[k] >= 0 ? s.min(counts_[k]) : s.max(counts_[k]));
    };
    const auto term_hi = [&](std::size_t k) {
        return values_[k] * (values_[k] >= 0 ? s.max(counts_[k]) : s.min(counts_[k]));
    };
    for (std::size_t k = 0; k < counts_.size(); ++k) {
        weighted_lo += term_lo(k);
        weighted_hi += term_hi(k);
    }
    if (weighted_lo > sum_hi || weighted_hi < sum_lo) return PropStatus::Fail;
    for (std::size_t k = 0; k < counts_.size(); ++k) {
        const Integer& v = values_[k];
        if (v == 0) continue;
        // v * c_k lies in [sum_lo - (weighted_hi - term_hi), sum_hi - (weighted_lo - term_lo)].
        const Integer lo = sum_lo - (weighted_hi - term_hi(k)), hi = sum_hi - (weighted_lo - term_lo(k));
        const bool ok = v > 0 ? s.set_bounds(counts_[k], ceil_div(lo, v), floor_div(hi, v))
                              : s.set_bounds(counts_[k], ceil_div(hi, v), floor_div(lo, v));
        if (!ok) return PropStatus::Fail;
    }
    for (std::size_t j = 0; j < vars_.size(); ++j) {
        const Contribution& c = scratch_[j];
        if (!c.inside) continue;
        if (!s.set_bounds(vars_[j], weighted_lo - (sum_hi - c.hi), weighted_hi - (sum_lo - c.lo)))
            return PropStatus::Fail;
    }
    return PropStatus::Ok;
}

Entailment CardinalitySums::entailment(const Store& s) const {
    Integer in = 0, sum = 0, count = 0, weighted = 0;
    for (VarId x : vars_) {
        if (!s.fixed(x)) return Entailment::Unknown;
        if (value_set_.contains(s.value(x))) {
            ++in;
            sum += s.value(x);
        }
    }
    for (std::size_t k = 0; k < counts_.size(); ++k) {
        if (!s.fixed(counts_[k])) return Entailment::Unknown;
        count += s.value(counts_[k]);
        weighted += values_[k] * s.value(counts_[k]);
    }
    return count == in && weighted == sum ? Entailment::True : Entailment::False;
}

std::vector<Subscription> CardinalitySums::subscriptions() const {
    return subscribe(vars_, Event::Domain, subscribe(counts_, Event::Bounds));
}

} // namespace constrint::engine
