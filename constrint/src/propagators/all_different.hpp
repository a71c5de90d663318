// all_different(x_1, ..., x_n) as one propagator (Gecode's distinct with value propagation), not
// n(n-1)/2 disequalities: a fixed variable's value leaves every other variable, and a pigeonhole
// check fails when fewer values than variables are left.
#pragma once

#include "engine/store.hpp"

namespace constrint::engine {

class AllDifferent final : public Propagator {
  public:
    explicit AllDifferent(std::vector<VarId> vars) : vars_(std::move(vars)) {}
    PropStatus propagate(Store& s) override;
    Entailment entailment(const Store& s) const override;
    std::vector<Subscription> subscriptions() const override { return subscribe(vars_, Event::Fixed); }
    bool idempotent() const override { return true; }
    const char* name() const override { return "all_different"; }

  private:
    std::vector<VarId> vars_;
    // Per variable: where its value was removed from the others (while that node is on the branch,
    // the removal holds and is not repeated: each run handles only the newly fixed variables).
    std::vector<Store::Stamp> removed_at_;
    // Per run: removed (kept to avoid an allocation per run); bytes, not vector<bool>, whose bit
    // masking showed in the value loop's profile.
    std::vector<std::uint8_t> done_;
};

} // namespace constrint::engine
