#include "propagators/reified.hpp"

#include <map>

namespace constrint::engine {

PropStatus Reified::propagate(Store& s) {
    if (!s.set_bounds(b_, 0, 1)) return PropStatus::Fail;
    if (s.fixed(b_)) {
        if (s.value(b_) == 1) return holds_->propagate(s);
        return mode_ == Mode::Equivalence ? fails_->propagate(s) : PropStatus::Subsumed;
    }
    switch (holds_->entailment(s)) {
    case Entailment::True:
        if (mode_ == Mode::Implication) return PropStatus::Subsumed;
        return s.assign(b_, 1) ? PropStatus::Subsumed : PropStatus::Fail;
    case Entailment::False:
        return s.assign(b_, 0) ? PropStatus::Subsumed : PropStatus::Fail;
    case Entailment::Unknown:
        break;
    }
    return PropStatus::Ok;
}

Entailment Reified::entailment(const Store& s) const {
    const Entailment c = holds_->entailment(s);
    if (!s.fixed(b_)) {
        // b -> C holds whatever b is when C holds.
        return mode_ == Mode::Implication && c == Entailment::True ? Entailment::True : Entailment::Unknown;
    }
    if (c == Entailment::Unknown)
        return s.value(b_) == 0 && mode_ == Mode::Implication ? Entailment::True : Entailment::Unknown;
    const bool b = s.value(b_) == 1, holds = c == Entailment::True;
    if (mode_ == Mode::Implication) return !b || holds ? Entailment::True : Entailment::False;
    return b == holds ? Entailment::True : Entailment::False;
}

std::vector<Subscription> Reified::subscriptions() const {
    // Each variable of C with the weakest event either side of C subscribes to.
    std::map<VarId, Event> weakest;
    for (const Propagator* p : {holds_.get(), fails_.get()}) {
        for (const Subscription& sub : p->subscriptions()) {
            auto [it, inserted] = weakest.emplace(sub.var, sub.event);
            if (!inserted && sub.event < it->second) it->second = sub.event;
        }
    }
    std::vector<Subscription> subs{{b_, Event::Fixed}};
    for (const auto& [var, event] : weakest)
        subs.push_back({var, event});
    return subs;
}

} // namespace constrint::engine
