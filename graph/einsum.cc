#include "graph/einsum.h"

#include <algorithm>
#include <map>

namespace hetsched {

namespace {

bool is_letter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

// One side of the equation's subscripts: letters, and where "..." sits
// (-1: none).
struct Term {
  std::string letters;
  int ellipsis_at = -1;  // index into letters before which the ellipsis dims go
};

Result<Term> read_term(const std::string& text) {
  Term t;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == ' ') continue;
    if (c == '.') {
      if (text.compare(i, 3, "...") != 0 || t.ellipsis_at >= 0)
        return invalid_argument("'" + text + "': a '.' outside a single '...'");
      t.ellipsis_at = static_cast<int>(t.letters.size());
      i += 2;
      continue;
    }
    if (!is_letter(c)) return invalid_argument("'" + text + "': '" + std::string(1, c) + "' is not a subscript (a-z, A-Z)");
    t.letters += c;
  }
  return t;
}

}  // namespace

Result<EinsumSpec> parse_einsum(const std::string& equation, const std::vector<Shape>& shapes) {
  const size_t arrow = equation.find("->");
  const std::string lhs = equation.substr(0, arrow);
  std::vector<Term> terms;
  for (size_t start = 0;;) {
    const size_t comma = lhs.find(',', start);
    HS_ASSIGN_OR_RETURN(Term t, read_term(lhs.substr(start, comma == std::string::npos ? comma : comma - start)));
    terms.push_back(std::move(t));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (terms.size() != shapes.size())
    return invalid_argument("equation '" + equation + "' has " + std::to_string(terms.size()) + " operands, the node " +
                            std::to_string(shapes.size()) + " inputs");
  // Ellipsis dims per operand, and the most of any.
  std::vector<int64_t> ellipsis_dims(terms.size(), 0);
  int64_t ellipsis_rank = 0;
  for (size_t i = 0; i < terms.size(); ++i) {
    const int64_t rank = static_cast<int64_t>(shapes[i].size()), named = static_cast<int64_t>(terms[i].letters.size());
    if (terms[i].ellipsis_at < 0 ? rank != named : rank < named)
      return invalid_argument("operand " + std::to_string(i) + " has rank " + std::to_string(rank) + ", its subscripts '" +
                              terms[i].letters + (terms[i].ellipsis_at < 0 ? "'" : "' and '...'") + " say otherwise");
    ellipsis_dims[i] = rank - named;
    ellipsis_rank = std::max(ellipsis_rank, ellipsis_dims[i]);
  }
  EinsumSpec spec;
  // Ids 0 .. ellipsis_rank - 1: the ellipsis dims, right-aligned.
  spec.sizes.assign(static_cast<size_t>(ellipsis_rank), 1);
  std::map<char, int> id_of;
  std::map<char, int> count;
  const auto merge = [&](int id, int64_t dim, const std::string& what) -> Status {
    int64_t& size = spec.sizes[static_cast<size_t>(id)];
    if (dim == size || dim == 1) return Status::ok();
    if (size == 1) {
      size = dim;
      return Status::ok();
    }
    return invalid_argument(what + " has dims " + std::to_string(size) + " and " + std::to_string(dim) +
                            ", which do not broadcast");
  };
  for (size_t i = 0; i < terms.size(); ++i) {
    const Term& t = terms[i];
    std::vector<int>& ids = spec.operands.emplace_back();
    size_t dim = 0;
    for (int k = 0; k <= static_cast<int>(t.letters.size()); ++k) {
      if (k == t.ellipsis_at)
        for (int64_t e = 0; e < ellipsis_dims[i]; ++e, ++dim) {
          const int id = static_cast<int>(ellipsis_rank - ellipsis_dims[i] + e);
          HS_RETURN_IF_ERROR(merge(id, shapes[i][dim], "'...'"));
          ids.push_back(id);
        }
      if (k == static_cast<int>(t.letters.size())) break;
      const char c = t.letters[static_cast<size_t>(k)];
      auto [it, fresh] = id_of.try_emplace(c, spec.num_ids());
      if (fresh) spec.sizes.push_back(1);
      HS_RETURN_IF_ERROR(merge(it->second, shapes[i][dim], "subscript '" + std::string(1, c) + "'"));
      ids.push_back(it->second);
      ++count[c];
      ++dim;
    }
  }
  if (arrow == std::string::npos) {
    for (int e = 0; e < ellipsis_rank; ++e) spec.output.push_back(e);
    for (const auto& [c, n] : count)  // std::map: in alphabetical order (upper case first, as numpy)
      if (n == 1) spec.output.push_back(id_of.at(c));
    return spec;
  }
  HS_ASSIGN_OR_RETURN(const Term out, read_term(equation.substr(arrow + 2)));
  for (int k = 0; k <= static_cast<int>(out.letters.size()); ++k) {
    if (k == out.ellipsis_at)
      for (int e = 0; e < ellipsis_rank; ++e) spec.output.push_back(e);
    if (k == static_cast<int>(out.letters.size())) break;
    const char c = out.letters[static_cast<size_t>(k)];
    const auto it = id_of.find(c);
    if (it == id_of.end()) return invalid_argument("output subscript '" + std::string(1, c) + "' is in no operand");
    if (std::count(out.letters.begin(), out.letters.end(), c) > 1)
      return invalid_argument("output subscript '" + std::string(1, c) + "' appears more than once");
    spec.output.push_back(it->second);
  }
  return spec;  // ids the output lacks, ellipsis dims too, are summed over
}

}  // namespace hetsched
