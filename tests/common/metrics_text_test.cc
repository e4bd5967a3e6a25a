// The Prometheus text exposition renderer (common/metrics_text.h): escaping, number
// formatting and the histogram's cumulative buckets, as the format 0.0.4 writes them.
#include "common/metrics_text.h"

#include <catch2/catch.hpp>

#include <array>
#include <cmath>
#include <limits>

using npac::common::escapeLabelValue;
using npac::common::formatSampleValue;
using npac::common::Histogram;
using npac::common::MetricsText;
using npac::common::MetricType;

namespace {
constexpr std::array<double, 3> kBounds{0.125, 1, 10};
}

TEST_CASE("A label value has its backslash, double quote and line feed escaped") {
  CHECK(escapeLabelValue(R"(a\b"c)" "\n" "d") == R"(a\\b\"c\nd)");
  CHECK(escapeLabelValue("0001") == "0001");
}

TEST_CASE("Sample values print whole numbers without a fraction and infinities as the format spells them") {
  CHECK(formatSampleValue(10) == "10");
  CHECK(formatSampleValue(0) == "0");
  CHECK(formatSampleValue(0.25) == "0.25");
  CHECK(formatSampleValue(0.0005) == "0.0005");
  CHECK(formatSampleValue(1796143285.398) == "1796143285.398");
  CHECK(formatSampleValue(std::numeric_limits<double>::infinity()) == "+Inf");
  CHECK(formatSampleValue(-std::numeric_limits<double>::infinity()) == "-Inf");
  CHECK(formatSampleValue(std::nan("")) == "NaN");
}

TEST_CASE("A family writes HELP with its backslashes and line feeds escaped then TYPE") {
  MetricsText m;
  m.family("npacd_x_total", "one\\two\nthree", MetricType::kCounter);
  m.sample("npacd_x_total", {{"spid", "0001"}, {"reason", "a\"b"}}, 3);
  CHECK(m.text() ==
        "# HELP npacd_x_total one\\\\two\\nthree\n"
        "# TYPE npacd_x_total counter\n"
        "npacd_x_total{spid=\"0001\",reason=\"a\\\"b\"} 3\n");
}

TEST_CASE("A histogram renders cumulative buckets ending in +Inf then its sum and count") {
  Histogram h(kBounds);
  for (double v : {0.0625, 0.125, 0.5, 20.0}) h.observe(v);
  MetricsText m;
  m.family("rtt_seconds", "round trips", MetricType::kHistogram);
  m.histogram("rtt_seconds", {{"spid", "0001"}}, h);
  CHECK(m.text() ==
        "# HELP rtt_seconds round trips\n"
        "# TYPE rtt_seconds histogram\n"
        "rtt_seconds_bucket{spid=\"0001\",le=\"0.125\"} 2\n"
        "rtt_seconds_bucket{spid=\"0001\",le=\"1\"} 3\n"
        "rtt_seconds_bucket{spid=\"0001\",le=\"10\"} 3\n"
        "rtt_seconds_bucket{spid=\"0001\",le=\"+Inf\"} 4\n"
        "rtt_seconds_sum{spid=\"0001\"} 20.6875\n"
        "rtt_seconds_count{spid=\"0001\"} 4\n");
}

TEST_CASE("A value equal to a bucket's upper bound falls in that bucket") {
  Histogram h(kBounds);
  h.observe(1);
  CHECK(h.counts() == std::vector<std::uint64_t>{0, 1, 0, 0});
}
