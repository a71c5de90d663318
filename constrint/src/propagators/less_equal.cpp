#include "propagators/relations.hpp"

namespace constrint::engine {

LessEqual::LessEqual(View x, View y, Integer offset)
    : x_(std::move(x)), y_(std::move(y)), offset_(std::move(offset)) {
    const std::optional<WordView> x_words = WordView::of(x_), y_words = WordView::of(y_);
    Word offset_word = 0;
    if (x_words && y_words && read_word(offset_, offset_word))
        words_ = Words{*x_words, *y_words, offset_word};
}

// Each step either fits a word or hands the whole run to the Integer path, which starts over from
// the bounds narrowed so far (every narrowing made here is one the Integer path would make too).
std::optional<PropStatus> LessEqual::propagate_words(Store& s) {
    if (!words_) return std::nullopt;
    const auto& [x, y, offset] = *words_;
    Word bound = 0;
    if (!y.max(s, bound) || !subtract_word(bound, offset, bound)) return std::nullopt;
    const std::optional<bool> x_narrowed = x.set_max(s, bound);
    if (!x_narrowed) return std::nullopt;
    if (!*x_narrowed) return PropStatus::Fail;
    if (!x.min(s, bound) || !add_word(bound, offset, bound)) return std::nullopt;
    const std::optional<bool> y_narrowed = y.set_min(s, bound);
    if (!y_narrowed) return std::nullopt;
    if (!*y_narrowed) return PropStatus::Fail;
    Word x_max = 0, y_min = 0;
    if (!x.max(s, x_max) || !y.min(s, y_min) || !add_word(x_max, offset, x_max)) return std::nullopt;
    return x_max <= y_min ? PropStatus::Subsumed : PropStatus::Ok;
}

PropStatus LessEqual::propagate(Store& s) {
    if (const std::optional<PropStatus> status = propagate_words(s)) return *status;
    if (!x_.set_max(s, y_.max(s) - offset_) || !y_.set_min(s, x_.min(s) + offset_)) return PropStatus::Fail;
    return x_.max(s) + offset_ <= y_.min(s) ? PropStatus::Subsumed : PropStatus::Ok;
}

Entailment LessEqual::entailment(const Store& s) const {
    if (x_.max(s) + offset_ <= y_.min(s)) return Entailment::True;
    if (x_.min(s) + offset_ > y_.max(s)) return Entailment::False;
    return Entailment::Unknown;
}

} // namespace constrint::engine
