#!/usr/bin/env bash
# Builds PRRTE (the PMIx reference runtime: prterun, prte, prun) against Debian 12's own libpmix
# (4.2.2), for the PMIx launcher tests' PRRTE case. Debian 12 has no PRRTE package, and PRRTE
# 3.x wants PMIx >= 4.2.4: v2.0.2 is the newest release that accepts 4.2.2 (it asks for >= 4.1).
#
#   tests/prrte/build.sh SRC [PREFIX]
#     SRC     a PRRTE git checkout (https://github.com/openpmix/prrte) or an unpacked release
#     PREFIX  where to install (default /opt/prrte); the tests look there and on PATH
#
# Needs: autoconf automake libtool flex perl (for a git checkout), libpmix-dev libevent-dev
# libhwloc-dev, a C compiler. About 3 minutes on 2 cores. Measured 2026-11-25 on a 2-CPU VM.
set -euo pipefail
src=${1:?usage: build.sh SRC [PREFIX]}
prefix=${2:-/opt/prrte}
cd "$src"
if [ -d .git ]; then
  git checkout -q v2.0.2
  [ -x configure ] || ./autogen.pl
fi
./configure --prefix="$prefix" --with-pmix=/usr/lib/x86_64-linux-gnu/pmix2 --with-hwloc \
  --with-libevent
make -j"$(nproc)"
make install
"$prefix/bin/prte_info" | head -5
