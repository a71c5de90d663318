#include "propagators/logic.hpp"

namespace constrint::engine {

namespace {

// Every part wakes the combination on any change of its variables.
std::vector<Subscription> all_subscriptions(const std::vector<std::unique_ptr<Propagator>>& parts) {
    std::vector<Subscription> all;
    for (const auto& part : parts) {
        for (const Subscription& sub : part->subscriptions())
            all.push_back({sub.var, Event::Domain});
    }
    return all;
}

} // namespace

PropStatus Or::propagate(Store& s) {
    Propagator* open = nullptr;
    int open_count = 0;
    for (const auto& part : parts_) {
        const Entailment e = part->entailment(s);
        if (e == Entailment::True) return PropStatus::Subsumed;
        if (e == Entailment::Unknown) {
            open = part.get();
            ++open_count;
        }
    }
    if (open_count == 0) return PropStatus::Fail;
    if (open_count == 1) return open->propagate(s);
    return PropStatus::Ok;
}

Entailment Or::entailment(const Store& s) const {
    bool unknown = false;
    for (const auto& part : parts_) {
        const Entailment e = part->entailment(s);
        if (e == Entailment::True) return Entailment::True;
        unknown = unknown || e == Entailment::Unknown;
    }
    return unknown ? Entailment::Unknown : Entailment::False;
}

std::vector<Subscription> Or::subscriptions() const {
    return all_subscriptions(parts_);
}

PropStatus And::propagate(Store& s) {
    bool all_subsumed = true;
    for (const auto& part : parts_) {
        const PropStatus status = part->propagate(s);
        if (status == PropStatus::Fail) return PropStatus::Fail;
        all_subsumed = all_subsumed && status == PropStatus::Subsumed;
    }
    return all_subsumed ? PropStatus::Subsumed : PropStatus::Ok;
}

Entailment And::entailment(const Store& s) const {
    bool unknown = false;
    for (const auto& part : parts_) {
        const Entailment e = part->entailment(s);
        if (e == Entailment::False) return Entailment::False;
        unknown = unknown || e == Entailment::Unknown;
    }
    return unknown ? Entailment::Unknown : Entailment::True;
}

std::vector<Subscription> And::subscriptions() const {
    return all_subscriptions(parts_);
}

} // namespace constrint::engine
