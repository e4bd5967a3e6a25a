// Metrics in the Prometheus text exposition format, version 0.0.4 (Prometheus
// "Exposition formats": `# HELP`, `# TYPE`, one sample per line, label values escaped,
// a histogram as cumulative `_bucket{le="…"}` lines ending in `le="+Inf"`, then `_sum`
// and `_count`). Two pieces, both vocabulary-free, which is why they live in common/:
// db/ (the QueueWriter's commit latency) and npacd's core and admin API all use them.
//
//   Histogram    a fixed array of bucket counts over static upper bounds, a sum and a
//                count: observe() is a short linear scan and three additions, no
//                allocation, no lock, no atomic. It belongs to one thread, like the object
//                that owns it; a scrape copies it on that thread.
//   MetricsText  the renderer: family() writes HELP and TYPE, sample()/histogram() the
//                lines. Samples of one family must follow their family() call (the format
//                requires a family's lines to be contiguous); the caller orders them.
//
// Why not prometheus-cpp (Debian's prometheus-cpp-dev 1.0): its model is a process-wide
// registry of atomic counters whose families are looked up under a mutex, so every owner
// would pay atomics on its hot path and series would outlive the associations they
// describe unless each owner removed them. npacd's state is owned by single-threaded
// objects (each ProviderCore on the core thread, the QueueWriter on its thread): they
// keep plain counters, and a scrape asks each owner for a snapshot on its own thread
// (docs/OPERATIONS.md "Metrics"), so a series exists exactly as long as what it counts.
//
// Threading: Histogram as its owner (one thread at a time); MetricsText is a local value
// of one scrape. escapeLabelValue and formatSampleValue are pure.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace npac::common {

class Histogram {
 public:
  // `upper_bounds` ascending and finite, with static storage (the +Inf bucket is implied).
  explicit Histogram(std::span<const double> upper_bounds)
      : bounds_(upper_bounds), counts_(upper_bounds.size() + 1, 0) {}

  void observe(double value) {
    std::size_t i = 0;
    while (i < bounds_.size() && value > bounds_[i]) ++i;
    ++counts_[i];
    sum_ += value;
    ++count_;
  }

  std::span<const double> bounds() const { return bounds_; }
  // Per bucket (not cumulative); the last one is above every bound.
  const std::vector<std::uint64_t>& counts() const { return counts_; }
  double sum() const { return sum_; }
  std::uint64_t count() const { return count_; }

 private:
  std::span<const double> bounds_;
  std::vector<std::uint64_t> counts_;
  double sum_ = 0;
  std::uint64_t count_ = 0;
};

enum class MetricType : std::uint8_t { kCounter, kGauge, kHistogram };

struct MetricLabel {
  std::string_view name;   // [a-zA-Z_][a-zA-Z0-9_]*: the caller's constant
  std::string_view value;  // any UTF-8: escaped here
};

// A label value as the format writes it: backslash, double quote and line feed escaped.
std::string escapeLabelValue(std::string_view value);
// A sample value: integers without a fraction, +Inf/-Inf/NaN as the format spells them,
// other numbers with enough digits to read back the same double.
std::string formatSampleValue(double value);

class MetricsText {
 public:
  // `# HELP name help` (help's backslashes and line feeds escaped) and `# TYPE name type`.
  void family(std::string_view name, std::string_view help, MetricType type);
  // `name{labels} value`; `name` is the family's name, or it with a suffix (_total…).
  void sample(std::string_view name, std::initializer_list<MetricLabel> labels, double value);
  void sample(std::string_view name, std::span<const MetricLabel> labels, double value);
  // The histogram's `_bucket` lines (cumulative, le="+Inf" last), `_sum` and `_count`.
  void histogram(std::string_view name, std::initializer_list<MetricLabel> labels, const Histogram& h);

  const std::string& text() const { return out_; }
  std::string take() { return std::move(out_); }

 private:
  void labels(std::span<const MetricLabel> labels, std::string_view extra_name = {},
              std::string_view extra_value = {});
  std::string out_;
};

}  // namespace npac::common
