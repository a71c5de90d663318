// Pollard-Brent rho on machine words for numbers below 2^126: a step with Montgomery multiplication
// over unsigned __int128 takes ~18 ns against ~240 ns with cpp_int, so the 2^20 steps positive_divisors
// allows (factors up to about 2^40) take about 20 ms; ECM (ecm.hpp) takes the larger factors.
#pragma once

#include "constrint/integer.hpp"

#include <cstdint>
#include <functional>
#include <optional>

namespace constrint::detail {

// Numbers below this many bits take the machine-word path (sums of two residues cannot overflow).
inline constexpr unsigned kMachineFactoredBits = 126;

// A non-trivial factor of the odd composite n (n < 2^kMachineFactoredBits), or nothing when the
// budget of steps runs out; `stop` is asked once per block of 128 steps and ends the budget.
std::optional<Integer> pollard_brent_128(const Integer& n, std::uint64_t& budget,
                                         const std::function<bool()>& stop);

} // namespace constrint::detail
