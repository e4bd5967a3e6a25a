#!/usr/bin/env bash
# Usage: check_discovery.sh CTEST BUILD_DIR TARGET...
# For each Catch2 test executable, the number of test cases it lists must equal the
# number of CTest tests discovered under its prefix. A ';' in a name is a CMake list
# separator: catch_discover_tests splits the name into pieces that match no test case
# and still "pass", so the real case never runs under CTest.
set -u
ctest=$1 build=$2; shift 2
status=0
for target in "$@"; do
  folder=${target%_tests}
  exe="$build/tests/$target"
  listed=$("$exe" --list-test-names-only | grep -c .)
  discovered=$(cd "$build" && "$ctest" -N -R "^${folder}/" | grep -c "Test *#")
  if [ "$listed" != "$discovered" ]; then
    echo "$target: $listed Catch2 test cases but $discovered CTest tests — a test name breaks discovery"
    status=1
  fi
done
[ $status = 0 ] && echo "every test case of $* is discovered"
exit $status
