// Branch and bound: after each solution, later solutions must be lexicographically better.
#pragma once

#include "constrint/model.hpp"
#include "engine/store.hpp"

namespace constrint::engine {

class ObjectiveBound final : public Propagator {
  public:
    ObjectiveBound(std::vector<VarId> objectives, std::vector<Sense> senses)
        : objectives_(std::move(objectives)), senses_(std::move(senses)) {}
    // The values of the best solution so far; from now on only strictly better ones pass.
    void improve_on(std::vector<Integer> best) { best_ = std::move(best); }

    PropStatus propagate(Store& s) override {
        if (best_.empty()) return PropStatus::Ok;
        // While the leading objectives equal the best values, the next one must not be worse.
        for (std::size_t i = 0; i < objectives_.size(); ++i) {
            const VarId o = objectives_[i];
            const bool up = senses_[i] == Sense::Maximize;
            if (!(up ? s.set_min(o, best_[i]) : s.set_max(o, best_[i]))) return PropStatus::Fail;
            if (!s.fixed(o) || s.value(o) != best_[i]) return PropStatus::Ok;
        }
        return PropStatus::Fail; // equal to the best: not an improvement
    }
    Entailment entailment(const Store&) const override { return Entailment::Unknown; }
    std::vector<Subscription> subscriptions() const override {
        std::vector<Subscription> subs;
        for (VarId o : objectives_)
            subs.push_back({o, Event::Bounds});
        return subs;
    }
    const char* name() const override { return "objective_bound"; }

  private:
    std::vector<VarId> objectives_;
    std::vector<Sense> senses_;
    std::vector<Integer> best_;
};

} // namespace constrint::engine
