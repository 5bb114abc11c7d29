#!/usr/bin/env bash
# Dependencies between folders run downward only: every folder's sources include their own
# folder's headers and those of folders on a lower layer, never a folder on its own layer or
# above. The table below is the design's picture (a folder missing from it fails too, so that a
# new one is placed on purpose). Reads the source tree the test was built from: the runfiles'
# README.md links to it.
#   tests/layering_test.sh [ROOT]
set -u
root=${1:-}
if [[ -z "$root" ]]; then
  readme=$(readlink -f "${TEST_SRCDIR:-.}/${TEST_WORKSPACE:-__main__}/README.md" 2>/dev/null)
  root=$(dirname "${readme:-/nonexistent/x}")
fi
[[ -f "$root/WORKSPACE" ]] || { echo "layering_test: no source tree at '$root'"; exit 1; }

# folder layer (lower layers first; a folder may include only folders of a lower layer)
layers='
memcopy 0
memreg 1
ringbuf 1
pipeline 2
devcoll 2
transport/core 3
transport 4
transport/shm 5
transport/sock 5
transport/lmt 5
internode 6
internode/tcp 7
internode/boot 8
internode/ib 8
internode/pmix 8
wiring 9
mpigpu_api 10
mpi 11
perf 11
benchmarks 12
tools 12
benchmarks/halo_mpi 13
benchmarks/peers 13
tests 13
tests/mpi 14
docs/examples 14
'
declare -A layer
while read -r f l; do [[ -n "$f" ]] && layer[$f]=$l; done <<<"$layers"

cd "$root" || exit 1
bad=0
while IFS= read -r file; do
  from=$(dirname "$file")
  [[ "$from" == benchmarks/results* ]] && continue  # measurements' own probes, not built
  if [[ -z "${layer[$from]+x}" ]]; then
    echo "$file: folder $from is not in the layer table of tests/layering_test.sh"
    bad=1
    continue
  fi
  while IFS= read -r inc; do
    to=$(dirname "$inc")
    [[ "$to" == "$from" || ! -e "$inc" ]] && continue  # its own folder, or a system header
    [[ "$to" == third_party* ]] && continue
    if [[ -z "${layer[$to]+x}" ]]; then
      echo "$file includes $inc: folder $to is not in the layer table"
      bad=1
    elif (( ${layer[$to]} >= ${layer[$from]} )); then
      echo "$file includes $inc: $to (layer ${layer[$to]}) is not below $from (layer ${layer[$from]})"
      bad=1
    fi
  done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$file")
done < <(find . \( -name 'bazel-*' -o -name third_party -o -name .git -o -path ./benchmarks/results \) -prune -o \
              -type f \( -name '*.h' -o -name '*.cc' -o -name '*.cu' -o -name '*.cuh' -o -name '*.c' \) \
              -print | sed 's#^\./##' | sort)
if (( bad )); then
  echo "FAIL: a folder includes one on its own layer or above"
  exit 1
fi
echo "PASS: every include runs downward"
