#!/usr/bin/env bash
# Fetches MPICH 4.0.2's test suite (test/mpi of Debian bookworm's mpich source package) into a
# cache outside the repository and prints the suite's directory:
#   tests/mpich/fetch.sh [CACHE]      (CACHE: $MPICH_SUITE_CACHE, default /var/cache/mpigpu-mpich)
# apt reads a temporary deb-src list with its own lists directory, so the system's apt state is
# left alone. Needs dpkg-dev (dpkg-source) for the unpacking.
set -euo pipefail
cache=${1:-${MPICH_SUITE_CACHE:-/var/cache/mpigpu-mpich}}
mkdir -p "$cache"
cache=$(cd "$cache" && pwd)
suite=$(ls -d "$cache"/mpich-4.0.2/test/mpi 2>/dev/null || true)
if [ -n "$suite" ] && [ -f "$suite/configure" ]; then echo "$suite"; exit 0; fi
command -v dpkg-source >/dev/null || { echo "fetch.sh: dpkg-source missing (apt-get install dpkg-dev)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/lists/partial" "$tmp/parts"
echo "deb-src http://deb.debian.org/debian bookworm main" >"$tmp/sources.list"
opts=(-o "Dir::Etc::SourceList=$tmp/sources.list" -o "Dir::Etc::SourceParts=$tmp/parts"
      -o "Dir::State::Lists=$tmp/lists")
apt-get "${opts[@]}" update >&2
(cd "$cache" && apt-get "${opts[@]}" source mpich=4.0.2-3 >&2 || apt-get "${opts[@]}" source mpich >&2)
suite=$(ls -d "$cache"/mpich-4.0.2/test/mpi)
[ -f "$suite/configure" ] || { echo "fetch.sh: $suite/configure missing" >&2; exit 1; }
echo "$suite"
