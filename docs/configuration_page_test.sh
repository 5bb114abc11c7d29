#!/usr/bin/env bash
# docs/configuration.md is exactly what `mpigpu-info --config --markdown` prints from the settings
# registry: a setting added, removed or re-described without the page fails here.
set -uo pipefail
info=$1
page=$2
out=$(mktemp)
trap 'rm -f "$out"' EXIT
# The page describes the defaults, never this environment: the output must not depend on it.
MPIGPU_LMT_UNITS=1000000 MPIGPU_DEBUG=trace "$info" --config --markdown >"$out" 2>/dev/null || {
  echo "FAIL: mpigpu-info --config --markdown exited with status $?" >&2
  exit 1
}
grep -q '^| `MPIGPU_EAGER_LIMIT` | `64K` | 1K\.\.64M |' "$out" || {
  echo "FAIL: no row for MPIGPU_EAGER_LIMIT in the generated page" >&2
  exit 1
}
if ! diff -u "$page" "$out"; then
  echo >&2
  echo "FAIL: docs/configuration.md differs from the settings registry (diff above: - page, + registry)." >&2
  echo "Regenerate it:  bazel run //tools:mpigpu-info -- --config --markdown > docs/configuration.md" >&2
  exit 1
fi
echo "docs/configuration.md matches the settings registry ($(grep -c '^| `MPIGPU_' "$out") settings)"
