// The -t time limit while a FlatZinc model is read and built, not only while it is searched: the
// lexer, the parser and the builder check it every few thousand steps, so that a model of millions
// of variables stops within the limit (solve_flatzinc then answers =====UNKNOWN=====).
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>

namespace constrint::flatzinc {

// Thrown by Deadline::check when the limit has passed.
struct TimeLimitReached {};

class Deadline {
  public:
    using Clock = std::chrono::steady_clock;
    Deadline() = default;
    Deadline(Clock::time_point start, std::optional<double> seconds) {
        if (seconds)
            at_ =
                start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(*seconds));
    }
    // Cheap enough for every token and every variable: the clock is read once in 1024 calls.
    void check() {
        if (at_ && (++calls_ & 1023) == 0 && Clock::now() > *at_) throw TimeLimitReached{};
    }

  private:
    std::optional<Clock::time_point> at_;
    std::uint64_t calls_ = 0;
};

} // namespace constrint::flatzinc
