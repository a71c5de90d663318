// Classic models built through the C++ API, shared by the tests and the benchmarks.
#pragma once

#include <constrint/constrint.hpp>

#include <string>
#include <vector>

namespace constrint::examples {

// n queens on an n x n board: q[i] is the row of the queen in column i.
inline Model queens(int n) {
    Model m;
    std::vector<Var> q;
    for (int i = 0; i < n; ++i)
        q.push_back(m.var("q" + std::to_string(i + 1), 1, n));
    for (int i = 0; i < n; ++i) {
        for (int j = i + 1; j < n; ++j) {
            m.add(q[i] != q[j]);
            m.add(q[i] + i != q[j] + j);
            m.add(q[i] - i != q[j] - j);
        }
    }
    return m;
}

// Pigeons into holes, pairwise different (no global constraint): unsatisfiable when holes < pigeons.
inline Model pigeonhole(int pigeons, int holes) {
    Model m;
    std::vector<Var> p;
    for (int i = 0; i < pigeons; ++i)
        p.push_back(m.var("p" + std::to_string(i + 1), 1, holes));
    for (int i = 0; i < pigeons; ++i) {
        for (int j = i + 1; j < pigeons; ++j)
            m.add(p[i] != p[j]);
    }
    return m;
}

} // namespace constrint::examples
