#!/usr/bin/env bash
# Usage: check_discovery.sh CTEST BUILD_DIR ENTRY...
# ENTRY is TARGET (CTest prefix "<folder>/", every test case) or TARGET:PREFIX:SPEC for
# an executable discovered under PREFIX/ with the Catch2 test spec SPEC (db_tests runs
# twice, against SQLite and PostgreSQL).
# For each entry, the number of test cases the executable lists (with that spec) must
# equal the number of CTest tests discovered under its prefix. A ';' in a name is a CMake
# list separator: catch_discover_tests splits the name into pieces that match no test
# case and still "pass", so the real case never runs under CTest.
set -u
ctest=$1 build=$2; shift 2
status=0
for entry in "$@"; do
  IFS=: read -r target prefix spec <<<"$entry"
  prefix=${prefix:-${target%_tests}}
  exe="$build/tests/$target"
  if [ -n "$spec" ]; then
    listed=$("$exe" "$spec" --list-test-names-only | grep -c .)
  else
    listed=$("$exe" --list-test-names-only | grep -c .)
  fi
  # Only names under the prefix: -R also lists the fixture tests those tests require.
  discovered=$(cd "$build" && "$ctest" -N -R "^${prefix}/" | grep -cE "Test +#[0-9]+: ${prefix}/")
  if [ "$listed" != "$discovered" ]; then
    echo "$target${spec:+ $spec}: $listed Catch2 test cases but $discovered CTest tests under ${prefix}/ — a test name breaks discovery"
    status=1
  fi
done
[ $status = 0 ] && echo "every test case of $* is discovered"
exit $status
