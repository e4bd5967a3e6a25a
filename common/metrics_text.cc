#include "common/metrics_text.h"

#include <charconv>
#include <cmath>
#include <vector>

namespace npac::common {

std::string escapeLabelValue(std::string_view value) {
  std::string out;
  out.reserve(value.size());
  for (char c : value) {
    switch (c) {
      case '\\': out += "\\\\"; break;
      case '"': out += "\\\""; break;
      case '\n': out += "\\n"; break;
      default: out.push_back(c);
    }
  }
  return out;
}

std::string formatSampleValue(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  char buffer[64];
  // Whole numbers (every counter) without exponent or fraction, up to 2^53 exactly.
  if (value == std::floor(value) && std::fabs(value) < 9007199254740992.0) {
    auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, static_cast<long long>(value));
    return std::string(buffer, end);
  }
  // The shortest text that reads back the same double; fixed notation (0.0005, not
  // 5e-04) in the range bucket bounds and durations live in.
  const double magnitude = std::fabs(value);
  auto [end, ec] = magnitude >= 1e-6 && magnitude < 1e15
                       ? std::to_chars(buffer, buffer + sizeof buffer, value, std::chars_format::fixed)
                       : std::to_chars(buffer, buffer + sizeof buffer, value);
  return std::string(buffer, end);
}

void MetricsText::family(std::string_view name, std::string_view help, MetricType type) {
  out_ += "# HELP ";
  out_ += name;
  out_ += ' ';
  for (char c : help) {
    if (c == '\\') out_ += "\\\\";
    else if (c == '\n') out_ += "\\n";
    else out_.push_back(c);
  }
  out_ += "\n# TYPE ";
  out_ += name;
  switch (type) {
    case MetricType::kCounter: out_ += " counter\n"; break;
    case MetricType::kGauge: out_ += " gauge\n"; break;
    case MetricType::kHistogram: out_ += " histogram\n"; break;
  }
}

void MetricsText::labels(std::span<const MetricLabel> labels, std::string_view extra_name,
                         std::string_view extra_value) {
  if (labels.empty() && extra_name.empty()) return;
  out_ += '{';
  bool first = true;
  auto one = [&](std::string_view name, std::string_view value) {
    if (!first) out_ += ',';
    first = false;
    out_ += name;
    out_ += "=\"";
    out_ += escapeLabelValue(value);
    out_ += '"';
  };
  for (const MetricLabel& label : labels) one(label.name, label.value);
  if (!extra_name.empty()) one(extra_name, extra_value);
  out_ += '}';
}

void MetricsText::sample(std::string_view name, std::span<const MetricLabel> labels_in, double value) {
  out_ += name;
  labels(labels_in);
  out_ += ' ';
  out_ += formatSampleValue(value);
  out_ += '\n';
}

void MetricsText::sample(std::string_view name, std::initializer_list<MetricLabel> labels_in, double value) {
  sample(name, std::span<const MetricLabel>(labels_in.begin(), labels_in.size()), value);
}

void MetricsText::histogram(std::string_view name, std::initializer_list<MetricLabel> labels_in,
                            const Histogram& h) {
  const std::span<const MetricLabel> base(labels_in.begin(), labels_in.size());
  const std::string bucket = std::string(name) + "_bucket";
  std::uint64_t cumulative = 0;
  for (std::size_t i = 0; i < h.counts().size(); ++i) {
    cumulative += h.counts()[i];
    const std::string le = i < h.bounds().size() ? formatSampleValue(h.bounds()[i]) : "+Inf";
    out_ += bucket;
    labels(base, "le", le);
    out_ += ' ';
    out_ += formatSampleValue(static_cast<double>(cumulative));
    out_ += '\n';
  }
  sample(std::string(name) + "_sum", base, h.sum());
  sample(std::string(name) + "_count", base, static_cast<double>(h.count()));
}

}  // namespace npac::common
