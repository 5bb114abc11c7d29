#!/usr/bin/env bash
# The tree speaks of the project only: no tracked file's text or name may speak of how the work
# was organised (numbered sessions, runs or issues, named workers, work branches, paths outside
# the repository). Patterns: vocabulary_patterns.txt; exceptions, each with its reason:
# vocabulary_exceptions.txt. Commit history is not read.
#
# The files checked are the source tree's tracked files (git ls-files), found from this script's
# real location, so the test sees the tree as it is now and not a copy Bazel made; Bazel never
# caches its result (tags in tests/BUILD). Without git (an exported tarball) every file under the
# root is checked instead. `vocabulary_test.sh --root DIR` checks another tree.
set -uo pipefail
self=$(readlink -f "${BASH_SOURCE[0]}")
here=$(dirname "$self")
patterns="$here/vocabulary_patterns.txt"
exceptions="$here/vocabulary_exceptions.txt"
root=""
[ "${1:-}" = "--root" ] && root=$(readlink -f "$2")
[ -n "$root" ] || root=$(git -C "$here" rev-parse --show-toplevel 2>/dev/null) || root=$(dirname "$here")
for f in "$patterns" "$exceptions"; do [ -r "$f" ] || { echo "FAIL: cannot read $f" >&2; exit 1; }; done

list=$(mktemp); hits=$(mktemp); trap 'rm -f "$list" "$hits"' EXIT
cd "$root" || { echo "FAIL: no root $root" >&2; exit 1; }
if git rev-parse --git-dir >/dev/null 2>&1; then
  git ls-files >"$list" || { echo "FAIL: git ls-files failed in $root" >&2; exit 1; }
else
  find . -type f -not -path './.git/*' -not -path './bazel-*' | sed 's|^\./||' | sort >"$list"
fi
# Files listed but deleted in the working tree are not read.
skip=$(sed -n 's/^path  *//p' "$exceptions" | sed 's/ *#.*//' | paste -sd'|' -)
[ -n "$skip" ] && { grep -vE "$skip" "$list" >"$list.k"; mv "$list.k" "$list"; }
n=$(wc -l <"$list")
# A check that sees nothing passes for the wrong reason.
if [ "$n" -lt 100 ] || ! grep -qx 'tests/vocabulary_test.sh' "$list"; then
  echo "FAIL: only $n files seen under $root (expected the whole tree)" >&2; exit 1
fi
bad=$(grep -vE '^(#|$)' "$patterns" | grep -vE '^[ic] ' | head -1)
[ -z "$bad" ] || { echo "FAIL: a line of $patterns lacks its flag (i or c): $bad" >&2; exit 1; }
allow=$(sed -n 's/^match  *//p' "$exceptions" | paste -sd'|' -)

# One pass over the files for the case-insensitive patterns, one for the others.
for flag in i c; do
  args=(); while read -r f re; do [ "$f" = "$flag" ] && args+=(-e "$re"); done < <(grep -vE '^(#|$)' "$patterns")
  [ ${#args[@]} -gt 0 ] || continue
  ci=; [ "$flag" = i ] && ci=-i
  # Contents: path:line:matched text.
  tr '\n' '\0' <"$list" | xargs -0 grep -EHnoIs $ci "${args[@]}" | while IFS= read -r hit; do
    m=${hit#*:*:}
    [ -n "$allow" ] && grep -qiE "$allow" <<<"$m" && continue
    echo "$hit"
  done
  # Names.
  grep -E $ci "${args[@]}" "$list" | sed 's/$/: (file name)/'
done >"$hits"

if [ -s "$hits" ]; then
  echo "FAIL: $(wc -l <"$hits") places speak of the work instead of the project (say the fact, its"
  echo "date and machine, and the benchmarks/results/ folder that holds it):"
  cat "$hits"
  exit 1
fi
echo "ok: $n tracked files under $root, $(grep -cvE '^(#|$)' "$patterns") patterns, no hit"
