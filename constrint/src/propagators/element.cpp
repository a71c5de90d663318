#include "propagators/element.hpp"

namespace constrint::engine {

PropStatus ElementConstant::propagate(Store& s) {
    std::vector<Integer> indices, results;
    if (!s.set_bounds(index_, first_, first_ + values_.size() - 1)) return PropStatus::Fail;
    for (std::size_t i = 0; i < values_.size(); ++i) {
        const Integer index = first_ + i;
        if (s.dom(index_).contains(index) && s.dom(result_).contains(values_[i])) {
            indices.push_back(index);
            results.push_back(values_[i]);
        }
    }
    if (indices.empty()) return PropStatus::Fail;
    if (!s.intersect(index_, Domain::values(std::move(indices))) ||
        !s.intersect(result_, Domain::values(std::move(results)))) {
        return PropStatus::Fail;
    }
    return s.fixed(index_) ? PropStatus::Subsumed : PropStatus::Ok;
}

Entailment ElementConstant::entailment(const Store& s) const {
    if (!s.fixed(index_) || !s.fixed(result_)) return Entailment::Unknown;
    const Integer i = s.value(index_) - first_;
    if (i < 0 || i >= values_.size()) return Entailment::False;
    return values_[static_cast<std::size_t>(i)] == s.value(result_) ? Entailment::True : Entailment::False;
}

PropStatus ElementVariable::propagate(Store& s) {
    if (!s.set_bounds(index_, first_, first_ + vars_.size() - 1)) return PropStatus::Fail;
    if (s.fixed(index_)) { // result == vars[index]: domain intersection both ways
        const VarId x = vars_[static_cast<std::size_t>(s.value(index_) - first_)];
        if (!s.intersect(x, s.dom(result_)) || !s.intersect(result_, s.dom(x))) return PropStatus::Fail;
        return s.fixed(x) ? PropStatus::Subsumed : PropStatus::Ok;
    }
    std::vector<Integer> indices;
    std::optional<Integer> lo, hi;
    for (std::size_t i = 0; i < vars_.size(); ++i) {
        const Integer index = first_ + i;
        if (!s.dom(index_).contains(index)) continue;
        const VarId x = vars_[i];
        if (s.max(x) < s.min(result_) || s.min(x) > s.max(result_)) continue;
        indices.push_back(index);
        if (!lo || s.min(x) < *lo) lo = s.min(x);
        if (!hi || s.max(x) > *hi) hi = s.max(x);
    }
    if (indices.empty()) return PropStatus::Fail;
    if (!s.intersect(index_, Domain::values(std::move(indices))) || !s.set_bounds(result_, *lo, *hi)) {
        return PropStatus::Fail;
    }
    if (s.fixed(index_)) return propagate(s);
    return PropStatus::Ok;
}

Entailment ElementVariable::entailment(const Store& s) const {
    if (!s.fixed(index_) || !s.fixed(result_)) return Entailment::Unknown;
    const Integer i = s.value(index_) - first_;
    if (i < 0 || i >= vars_.size()) return Entailment::False;
    const VarId x = vars_[static_cast<std::size_t>(i)];
    if (!s.fixed(x)) return s.dom(x).contains(s.value(result_)) ? Entailment::Unknown : Entailment::False;
    return s.value(x) == s.value(result_) ? Entailment::True : Entailment::False;
}

std::vector<Subscription> ElementVariable::subscriptions() const {
    return subscribe(vars_, Event::Domain, {{index_, Event::Domain}, {result_, Event::Domain}});
}

} // namespace constrint::engine
