// The propagator interface: a small object with one job, narrowing the domains of its variables.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

namespace constrint::engine {

class Store;
using VarId = int;

// What changed in a domain, weakest to strongest. A propagator subscribes to a variable with the
// weakest event that can let it narrow something.
enum class Event : std::uint8_t {
    Domain = 0, // any change, holes included
    Bounds = 1, // the minimum or the maximum changed
    Fixed = 2,  // a single value is left
};

enum class PropStatus : std::uint8_t {
    Ok,       // narrowed what it could (not necessarily to its own fixpoint)
    Fail,     // a domain became empty: no solution below this node
    Subsumed, // holds for every value left: never needs to run again below this node
};

enum class Entailment : std::uint8_t { False, True, Unknown };

// Rounds of bounds narrowing in one run of a propagator that loops to its own fixpoint (Linear,
// Times, Power). Bounds can creep a few values per round over huge domains (7x - 4y + 6z = 1 over
// 2^62, a fixed product near its square root, a power's roots against a result with holes), so a
// run ends after this many rounds and schedules itself again (Store::reschedule_running), which
// lets the store check the limits in between: the fuzzer found each of these running past limits.
constexpr int kRoundsPerRun = 64;

// The status that matches an entailment: proven true is subsumed, proven false fails.
inline PropStatus settle(Entailment e) {
    return e == Entailment::True    ? PropStatus::Subsumed
           : e == Entailment::False ? PropStatus::Fail
                                    : PropStatus::Ok;
}

struct Subscription {
    VarId var;
    Event event;
};

// Each of `vars` with the same event (appended to `subs`).
inline std::vector<Subscription> subscribe(const std::vector<VarId>& vars, Event event,
                                           std::vector<Subscription> subs = {}) {
    subs.reserve(subs.size() + vars.size());
    for (VarId x : vars)
        subs.push_back({x, event});
    return subs;
}

class Propagator {
  public:
    virtual ~Propagator() = default;
    virtual PropStatus propagate(Store& store) = 0;
    // Whether the constraint holds for all (True) or for none (False) of the values left.
    // Must decide once all its variables are fixed; used by disjunction and conjunction.
    virtual Entailment entailment(const Store& store) const = 0;
    virtual std::vector<Subscription> subscriptions() const = 0;
    // An idempotent propagator reaches its own fixpoint in one run, so the store does not wake it
    // for the changes it made itself.
    virtual bool idempotent() const { return false; }
    virtual const char* name() const = 0;
};

} // namespace constrint::engine
