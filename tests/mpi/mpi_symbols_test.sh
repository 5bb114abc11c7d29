#!/usr/bin/env bash
# Every function mpi.h declares is in libmpi.so twice: PMPI_x defined (T) and MPI_x a weak
# alias (W) at the same address, the profiling interface's contract.
#   mpi_symbols_test.sh MPI_H LIBMPI_SO
set -euo pipefail
hdr=$1 lib=$2
d=$(mktemp -d "${TEST_TMPDIR:-/tmp}/mpisyms.XXXXXX")
grep -oP '^MPIGPU_MPI_FN\([^,]+,\s*\K\w+' "$hdr" | sort -u >"$d/decl"
nm -D --defined-only "$lib" >"$d/syms"
trap 'rm -rf "$d"' EXIT
awk 'NR == FNR { want[$1] = 1; n++; next }
     $2 == "T" && $3 ~ /^PMPI_/ { p[substr($3, 6)] = $1 }
     $2 == "W" && $3 ~ /^MPI_/ { m[substr($3, 5)] = $1 }
     END {
       bad = 0
       for (f in want) {
         if (!(f in p)) { print "missing PMPI_" f; bad = 1 }
         else if (!(f in m)) { print "missing weak MPI_" f; bad = 1 }
         else if (p[f] != m[f]) { print "MPI_" f " is not an alias of PMPI_" f; bad = 1 }
       }
       if (n < 200) { print "only " n " functions declared"; bad = 1 }
       print "checked " n " functions"
       exit bad
     }' "$d/decl" "$d/syms"
