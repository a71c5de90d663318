#include "flashrnn/newton/cells.hpp"

namespace flashrnn::newton {

Cell parse_cell(std::string_view name) {
    std::string valid;
    for (Cell cell : all_cells) {
        const std::string_view cell_name = cell_info(cell).name;
        if (cell_name == name) return cell;
        valid += valid.empty() ? "" : ", ";
        valid += cell_name;
    }
    throw UnsupportedError("flashrnn::newton: unknown cell '" + std::string(name) +
                           "' (valid cells: " + valid + ")");
}

} // namespace flashrnn::newton
