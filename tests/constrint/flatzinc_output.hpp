// Reading fzn-constrint's output in tests: the solutions it printed, whatever their order (-p N
// prints a satisfaction problem's solutions in the order the threads find them).
#pragma once

#include <algorithm>
#include <string>
#include <vector>

// The solution blocks (each before a "----------" line), sorted.
inline std::vector<std::string> sorted_solutions(const std::string& out) {
    std::vector<std::string> found;
    std::size_t from = 0;
    for (std::size_t end; (end = out.find("----------\n", from)) != std::string::npos; from = end + 11)
        found.push_back(out.substr(from, end - from));
    std::sort(found.begin(), found.end());
    return found;
}
