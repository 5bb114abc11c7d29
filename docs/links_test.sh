#!/usr/bin/env bash
# Every relative link in README.md and docs/**/*.md resolves to a file or folder of the source
# tree. $1 is README.md in the runfiles, a link to the source tree's copy: the tree's root is the
# folder that copy lies in, so the links are checked against the tree as it is.
set -uo pipefail
readme=$(readlink -f "$1")
root=$(dirname "$readme")
[ -d "$root/docs" ] || { echo "FAIL: no docs/ beside $readme" >&2; exit 1; }
bad=0
checked=0
while IFS= read -r -d '' page; do
  dir=$(dirname "$page")
  # Targets of [text](target) outside code spans; a title after the target is cut off.
  while IFS= read -r target; do
    target=${target%% *}
    case "$target" in
      http://* | https://* | mailto:* | '#'* | '') continue ;;
    esac
    path=${target%%#*}
    checked=$((checked + 1))
    if [ ! -e "$dir/$path" ]; then
      echo "FAIL: ${page#"$root"/}: the link '$target' names nothing (${path} from ${dir#"$root"})" >&2
      bad=$((bad + 1))
    fi
  done < <(sed -e 's/`[^`]*`//g' "$page" | grep -oE '\]\([^)]+\)' | sed -e 's/^](//' -e 's/)$//')
done < <(find "$root/README.md" "$root/docs" -name '*.md' -print0)
if [ "$bad" -gt 0 ]; then
  echo "$bad of $checked relative links are broken" >&2
  exit 1
fi
echo "$checked relative links resolve"
