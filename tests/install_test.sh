#!/usr/bin/env bash
# tools/install.sh puts headers, libmpigpu.so, the tools and the wrappers under a prefix; a program
# built there with mpigpucc runs under the installed mpigpurun on 3 ranks.
set -euo pipefail
root="${TEST_SRCDIR}/${TEST_WORKSPACE}"
prefix="${TEST_TMPDIR}/prefix"
"$root/tools/install.sh" --prefix "$prefix" --no-build --from "$root"
for f in include/mpigpu.h lib/libmpigpu.so bin/mpigpurun bin/mpigpu-info bin/mpigpucc bin/mpigpucxx; do
  [ -e "$prefix/$f" ] || { echo "missing $prefix/$f" >&2; exit 1; }
done
"$prefix/bin/mpigpucc" -show -c x.c | grep -q -- "-I$prefix/include" || { echo "-show without -I" >&2; exit 1; }
"$prefix/bin/mpigpucc" "$root/tests/install_smoke.c" -o "$TEST_TMPDIR/smoke"
out=$("$prefix/bin/mpigpurun" -n 3 --timeout 60 "$TEST_TMPDIR/smoke")
echo "$out"
[ "$out" = "install smoke: 3 ranks ok" ] || { echo "unexpected output" >&2; exit 1; }
# (Captured first: grep -q would close the pipe early and, with pipefail, fail the test.)
info=$("$prefix/bin/mpigpu-info" --config)
grep -q MPIGPU_EAGER_LIMIT <<<"$info"
# Bad usage is refused with a message.
if "$root/tools/install.sh" --bogus 2>/dev/null; then echo "bad option accepted" >&2; exit 1; fi
echo "install test ok"
