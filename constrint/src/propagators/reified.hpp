// Reification: a 0/1 variable b tied to a constraint C, as b <-> C (FlatZinc's *_reif) or b -> C
// (*_imp). C and its negation are given as propagators; their entailment decides b.
#pragma once

#include "engine/store.hpp"

#include <memory>

namespace constrint::engine {

class Reified final : public Propagator {
  public:
    enum class Mode : std::uint8_t { Equivalence, Implication };

    // `holds` propagates C, `fails` propagates not C (unused for Implication but still required
    // to be its negation, for entailment).
    Reified(VarId b, std::unique_ptr<Propagator> holds, std::unique_ptr<Propagator> fails, Mode mode)
        : b_(b), holds_(std::move(holds)), fails_(std::move(fails)), mode_(mode) {}
    PropStatus propagate(Store& s) override;
    Entailment entailment(const Store& s) const override;
    std::vector<Subscription> subscriptions() const override;
    const char* name() const override { return "reified"; }

  private:
    VarId b_;
    std::unique_ptr<Propagator> holds_, fails_;
    Mode mode_;
};

} // namespace constrint::engine
