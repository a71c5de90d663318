// Disjunction and conjunction of constraints, each part being a relation propagator.
#pragma once

#include "engine/store.hpp"

#include <memory>

namespace constrint::engine {

// At least one part holds. Parts proven false are ignored; when one part is left it propagates as
// if it were posted alone; when a part is proven true the disjunction is subsumed.
class Or final : public Propagator {
  public:
    explicit Or(std::vector<std::unique_ptr<Propagator>> parts) : parts_(std::move(parts)) {}
    PropStatus propagate(Store& s) override;
    Entailment entailment(const Store& s) const override;
    std::vector<Subscription> subscriptions() const override;
    const char* name() const override { return "or"; }

  private:
    std::vector<std::unique_ptr<Propagator>> parts_;
};

// Every part holds (inside a disjunction; at the top level parts are posted one by one).
class And final : public Propagator {
  public:
    explicit And(std::vector<std::unique_ptr<Propagator>> parts) : parts_(std::move(parts)) {}
    PropStatus propagate(Store& s) override;
    Entailment entailment(const Store& s) const override;
    std::vector<Subscription> subscriptions() const override;
    const char* name() const override { return "and"; }

  private:
    std::vector<std::unique_ptr<Propagator>> parts_;
};

} // namespace constrint::engine
