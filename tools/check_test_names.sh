#!/usr/bin/env bash
# Test-name check: a doctest TEST_CASE name must not contain ';'. CMake's
# doctest_discover_tests turns the list of names into a CMake list, which splits
# a name at ';': the halves select no test case, and such a CTest test "passes"
# while running nothing. Prints each offending TEST_CASE and exits 1 if there is
# any. Run from anywhere; CTest runs it.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bad=$(grep -rn --include='*.cc' --include='*.cu' -E 'TEST_CASE\("[^"]*;' \
        sim costmodel policies traces reports configs kernels fuzz 2>/dev/null)
if [[ -n "$bad" ]]; then
  echo "TEST_CASE names with ';' (CTest would split them and run nothing):"
  echo "$bad"
  exit 1
fi
echo "no TEST_CASE name contains ';'"
