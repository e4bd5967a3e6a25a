#include "tunables/markdown.h"

#include "tunables/text.h"

#include <string_view>

namespace npac::tunables {
namespace {

// A table cell may not contain a bare '|'.
std::string cell(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '|') out += '\\';
    out += c;
  }
  return out;
}

std::string code(std::string_view text) { return cat("`", text, "`"); }

constexpr std::string_view kPreamble = R"md(# Tunables

<!-- Generated from tunables/catalogue.cc: do not edit by hand.
     Regenerate with: build/bin/npac-tunables-doc > docs/TUNABLES.md
     tests/tunables/markdown_test.cc fails while this file is stale. -->

Every operator-settable parameter of npacd. Each is declared once, in
`tunables/catalogue.cc`; validation, the admin API and this page all come from there.

## How a value is chosen

A read for a service provider resolves **per-provider override → global override →
default**. A tunable's scope says which overrides it takes: *global* (one value for the
NPAC), *per provider* (only per SPID; otherwise the default), or both. A SPID is four
ASCII letters or digits.

A change is validated (unknown name, wrong type, out of range, wrong scope, unknown
enumeration value, throttle levels that contradict each other — each its own error),
stored in SQLite together with an audit entry (who, old value, new value, when) in one
transaction, and then applied to running code without a restart. Clearing an override
falls back to the next level.

## Writing values

| type | accepted text | stored as |
|---|---|---|
| bool | `on`, `off`, `true`, `false` (any case) | `on` / `off` |
| integer | decimal | decimal |
| duration | a number and a unit `d`, `h`, `m`, `s`, `ms`, possibly several (`1h30m`); a bare `0` | the largest exact unit: `900s` → `15m` |
| enumeration | one of the listed names (any case) | the listed name |
| string | printable ASCII | as typed |

Where a range says "0 (off)", zero switches the feature off and any other value must lie
in the range.

)md";

}  // namespace

std::string renderTunablesMarkdown(const Catalogue& catalogue) {
  std::string out(kPreamble);
  out += "## Summary\n\n";
  out += "| name | type | scope | default | range | unit |\n";
  out += "|---|---|---|---|---|---|\n";
  for (const TunableSpec& spec : catalogue.all()) {
    out += cat("| [", code(spec.name), "](#", spec.name, ") | ", toString(spec.type), " | ",
               toString(spec.scope), " | ", code(catalogue.format(spec, spec.default_value)),
               " | ", cell(catalogue.describeRange(spec)), " | ", spec.unit, " |\n");
  }
  out += "\n## Details\n";
  for (const TunableSpec& spec : catalogue.all()) {
    out += cat("\n### ", spec.name, "\n\n", spec.description, "\n\n");
    out += cat("- type: ", toString(spec.type), "\n");
    out += cat("- scope: ", toString(spec.scope), "\n");
    out += cat("- default: ", code(catalogue.format(spec, spec.default_value)), "\n");
    out += cat("- range: ", catalogue.describeRange(spec), spec.unit.empty() ? "" : " ",
               spec.unit, "\n");
  }
  return out;
}

}  // namespace npac::tunables
