#include "cli/op_profile.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>

#include "partitioner/preview.h"  // json_quote

namespace hetsched::cli {

namespace {

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

std::string type_of(const OpPiece& piece) {
  if (piece.ops.empty()) return piece.kind;
  if (piece.kind != "xnnpack") return piece.ops.front();
  const std::set<std::string> distinct(piece.ops.begin(), piece.ops.end());
  return distinct.size() == 1 ? piece.ops.front() : "xnnpack segment";
}

}  // namespace

OpProfile summarize_op_profile(const std::vector<RunStats>& runs) {
  OpProfile profile;
  profile.requests = static_cast<int>(runs.size());
  std::vector<double> totals;
  // A piece is the same across requests when its island and name are.
  std::map<std::pair<std::string, std::string>, size_t> index;
  std::vector<std::vector<double>> times;
  std::map<std::string, double> island_start;  // first start seen, to order islands
  for (const RunStats& run : runs) {
    totals.push_back(run.total_ms);
    for (const TraceEvent& e : run.events) {
      if (!e.op) continue;
      auto [it, fresh] = index.try_emplace({e.island, e.name}, profile.pieces.size());
      if (fresh) {
        profile.pieces.push_back({e.island, e.track, e.op_kind, e.name, e.nodes, e.ops, 0, 0});
        times.emplace_back();
        island_start.try_emplace(e.island, e.start_ms - run.start_ms);
      }
      times[it->second].push_back(e.ms);
    }
  }
  profile.request_p50_ms = median(totals);
  for (size_t i = 0; i < profile.pieces.size(); ++i) {
    // A piece missing from some requests counts 0 there.
    times[i].resize(runs.size(), 0.0);
    profile.pieces[i].p50_ms = median(times[i]);
    profile.pieces[i].share = profile.request_p50_ms > 0 ? profile.pieces[i].p50_ms / profile.request_p50_ms : 0;
  }
  std::stable_sort(profile.pieces.begin(), profile.pieces.end(), [&](const OpPiece& a, const OpPiece& b) {
    return island_start[a.island] < island_start[b.island];
  });

  std::map<std::pair<std::string, std::string>, OpTypeTime> types;
  for (const OpPiece& piece : profile.pieces) {
    const std::string op = type_of(piece);
    OpTypeTime& t = types[{piece.track, op}];
    t.track = piece.track;
    t.op = op;
    t.pieces++;
    t.ms += piece.p50_ms;
  }
  for (auto& [key, t] : types) {
    t.share = profile.request_p50_ms > 0 ? t.ms / profile.request_p50_ms : 0;
    profile.types.push_back(t);
  }
  std::stable_sort(profile.types.begin(), profile.types.end(), [](const OpTypeTime& a, const OpTypeTime& b) {
    return a.track != b.track ? a.track < b.track : a.ms > b.ms;
  });
  return profile;
}

void print_op_profile(const OpProfile& profile, int rows) {
  std::printf("\nops (p50 of %d requests; share of the request's p50 %.3f ms)\n", profile.requests,
              profile.request_p50_ms);
  if (profile.pieces.empty()) {
    std::printf("  no op timings: islands on delegates that do not time their pieces (vgf), or a queue without "
                "timestamps\n");
    return;
  }
  for (size_t first = 0; first < profile.pieces.size();) {
    size_t last = first;
    while (last < profile.pieces.size() && profile.pieces[last].island == profile.pieces[first].island) ++last;
    std::vector<const OpPiece*> island;
    double sum = 0;
    for (size_t i = first; i < last; ++i) {
      island.push_back(&profile.pieces[i]);
      sum += profile.pieces[i].p50_ms;
    }
    std::stable_sort(island.begin(), island.end(), [](const OpPiece* a, const OpPiece* b) { return a->p50_ms > b->p50_ms; });
    std::printf("  %s on %s: %zu pieces, %.3f ms\n", profile.pieces[first].island.c_str(),
                profile.pieces[first].track.c_str(), island.size(), sum);
    double rest = 0;
    for (size_t i = 0; i < island.size(); ++i) {
      if (static_cast<int>(i) >= rows) {
        rest += island[i]->p50_ms;
        continue;
      }
      const std::string op = island[i]->ops.empty() ? "" : type_of(*island[i]);
      std::printf("    %8.3f ms %5.1f %%  %-16s %s\n", island[i]->p50_ms, 100 * island[i]->share, op.c_str(),
                  island[i]->name.c_str());
    }
    if (island.size() > static_cast<size_t>(rows))
      std::printf("    %8.3f ms          ... %zu more\n", rest, island.size() - static_cast<size_t>(rows));
    first = last;
  }
  std::printf("  by op type\n");
  for (const OpTypeTime& t : profile.types)
    std::printf("    %-24s %-18s %4d pieces %8.3f ms %5.1f %%\n", t.track.c_str(), t.op.c_str(), t.pieces, t.ms,
                100 * t.share);
}

std::string op_profile_json(const OpProfile& profile) {
  std::ostringstream j;
  const auto list = [&](const std::vector<std::string>& v) {
    j << "[";
    for (size_t i = 0; i < v.size(); ++i) j << (i ? ", " : "") << json_quote(v[i]);
    j << "]";
  };
  j << "{\"request_p50_ms\": " << profile.request_p50_ms << ", \"pieces\": [";
  for (size_t i = 0; i < profile.pieces.size(); ++i) {
    const OpPiece& p = profile.pieces[i];
    j << (i ? ", " : "") << "{\"island\": " << json_quote(p.island) << ", \"track\": " << json_quote(p.track)
      << ", \"kind\": " << json_quote(p.kind) << ", \"nodes\": ";
    list(p.nodes);
    j << ", \"ops\": ";
    list(p.ops);
    j << ", \"p50_ms\": " << p.p50_ms << ", \"share\": " << p.share << "}";
  }
  j << "], \"op_types\": [";
  for (size_t i = 0; i < profile.types.size(); ++i) {
    const OpTypeTime& t = profile.types[i];
    j << (i ? ", " : "") << "{\"track\": " << json_quote(t.track) << ", \"op\": " << json_quote(t.op)
      << ", \"pieces\": " << t.pieces << ", \"ms\": " << t.ms << ", \"share\": " << t.share << "}";
  }
  j << "]}";
  return j.str();
}

}  // namespace hetsched::cli
