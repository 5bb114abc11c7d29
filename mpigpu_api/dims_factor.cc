// MPIGPU_Dims_create's factorization: n into k factors as balanced as possible, in
// non-increasing order. It follows MPICH 4.0.2's src/mpi/topo/dims_create.c step by step (which
// follows Traeff and Luebbe, "Specification Guideline Violations by MPI_Dims_create",
// EuroMPI'15), so programs get the grids they get with MPICH (its test suite checks 75,000 of
// them): primes above sqrt(n) go first, a few special cases are direct, the rest is a search
// for the smallest spread seeded by a round-robin guess. MPICH's code is Copyright (C) by
// Argonne National Laboratory, used under its notice (MPICH's COPYRIGHT file).
#include <algorithm>
#include <vector>

#include "mpigpu_api/comm_objects.h"

namespace mpigpu::api {
namespace {

struct Factor {
  int val, cnt;
};

// Prime factors of n, ascending; *nprimes = their count with multiplicity.
std::vector<Factor> FactorNum(int n, int* nprimes) {
  std::vector<Factor> f;
  *nprimes = 0;
  for (int p = 2; static_cast<long long>(p) * p <= n; p += p == 2 ? 1 : 2) {
    if (n % p != 0) continue;
    int cnt = 0;
    while (n % p == 0) {
      n /= p;
      ++cnt;
    }
    f.push_back({p, cnt});
    *nprimes += cnt;
  }
  if (n != 1) {
    f.push_back({n, 1});
    ++*nprimes;
  }
  return f;
}

// The divisors from the factors, ascending, without 1 and the number itself.
std::vector<int> Divisors(const std::vector<Factor>& f) {
  std::vector<int> d = {1};
  for (const Factor& x : f) {
    const size_t n = d.size();
    long long m = 1;
    for (int c = 0; c < x.cnt; ++c) {
      m *= x.val;
      for (size_t i = 0; i < n; ++i) d.push_back(static_cast<int>(d[i] * m));
    }
  }
  std::sort(d.begin(), d.end());
  return std::vector<int>(d.begin() + 1, d.end() - 1);
}

// The first guess: factors from the largest, each to the first slot from the end where it
// keeps the order, else to dims[0].
void FactorToDimsByRr(const std::vector<Factor>& f, int nd, int dims[]) {
  for (int i = 0; i < nd; ++i) dims[i] = 1;
  int k = 0;
  for (int i = static_cast<int>(f.size()) - 1; i >= 0; --i)
    for (int j = 0; j < f[i].cnt; ++j) {
      if (k < nd) {
        dims[k++] = f[i].val;
        continue;
      }
      int kk = nd - 1;
      for (; kk > 0; --kk)
        if (static_cast<long long>(dims[kk]) * f[i].val <= dims[kk - 1]) break;
      dims[kk] *= f[i].val;
    }
}

// MPICH's optbalance: tries divisors for trydims[idx] (down to 0), keeping in optdims the
// choice of smallest balance (*curbal) so far.
void OptBalance(int n, int idx, int nd, const std::vector<int>& divs, int trydims[], int* curbal,
                int optdims[]) {
  const int ndivs = static_cast<int>(divs.size());
  const int min = trydims[nd - 1];
  if (idx > 1) {
    for (int k = 0; k < ndivs; ++k) {
      int f = divs[k];
      if (idx < nd - 1 && f - min > *curbal) break;
      const int q = n / f;
      std::vector<int> newdivs;
      int sf;
      if (q % f == 0) {
        newdivs.push_back(f);
        sf = f;
      } else if (k + 1 < ndivs) {
        sf = divs[k + 1];
      } else {
        break;
      }
      if (idx < nd - 1 && sf - min > *curbal) break;
      long long ff = static_cast<long long>(sf) * sf;  // at least 2 more divisors
      int ii = idx - 1;
      for (; ii > 0 && ff <= q; --ii) ff *= sf;
      if (ii > 0) break;
      trydims[idx] = f;
      for (int kk = k + 1; kk < ndivs; ++kk) {
        f = divs[kk];
        if (static_cast<long long>(f) * f > q) break;
        if (q % f == 0) newdivs.push_back(f);
      }
      if (!newdivs.empty()) OptBalance(q, idx - 1, nd, newdivs, trydims, curbal, optdims);
    }
  } else if (idx == 1) {
    // Two left: the pair q >= f with the smallest q.
    int qprev = -1, k = 1;
    for (; k < ndivs; ++k) {
      const int q = n / divs[k];
      if (q < divs[k]) break;
      qprev = q;
    }
    const int f = divs[k - 1];
    const int q = qprev > 0 ? qprev : n / f;
    if (q < f) return;
    const int testbal = nd == 2 ? q - f : q - min;
    if (testbal <= *curbal) {
      for (int i = 2; i < nd; ++i) optdims[i] = trydims[i];
      optdims[0] = q;
      optdims[1] = f;
      *curbal = q - min;
    }
  } else {
    if (n - min <= *curbal) {
      for (int i = 1; i < nd; ++i) optdims[i] = trydims[i];
      optdims[0] = n;
      *curbal = n - min;
    }
  }
}

}  // namespace

std::vector<int> FactorDims(int nnodes, int needed) {
  std::vector<int> chosen(needed, 1);
  if (needed == 0) return chosen;
  if (needed == 1) {
    chosen[0] = nnodes;
    return chosen;
  }
  int nprimes = 0;
  std::vector<Factor> f = FactorNum(nnodes, &nprimes);
  // Primes above sqrt(n) (each once) lead.
  int next = 0;
  while (f.size() > 1 && next < needed - 1) {
    const Factor& big = f.back();
    if (big.cnt != 1 || static_cast<long long>(big.val) * big.val <= nnodes) break;
    chosen[next++] = big.val;
    nnodes /= big.val;
    --nprimes;
    f.pop_back();
  }
  const int nf = static_cast<int>(f.size());
  if (nprimes + next <= needed) {  // one prime per dimension
    int i = next + nprimes;
    for (const Factor& x : f)
      for (int m = 0; m < x.cnt; ++m) chosen[--i] = x.val;
    for (i = next + nprimes; i < needed; ++i) chosen[i] = 1;
    return chosen;
  }
  if (needed - next == 1) {
    chosen[next] = nnodes;
    return chosen;
  }
  if (nf == 1) {  // a power of one prime: round robin
    for (int k = next; k < needed; ++k) chosen[k] = 1;
    for (int cnt = f[0].cnt, k = next; cnt-- > 0; ++k) {
      if (k >= needed) k = next;
      chosen[k] *= f[0].val;
    }
    return chosen;
  }
  const int left = needed - next;
  bool even = true;
  for (const Factor& x : f) even &= x.cnt % left == 0;
  if (even) {  // every prime's count divides evenly: all equal
    int val = 1;
    for (const Factor& x : f)
      for (int p = 0; p < x.cnt / left; ++p) val *= x.val;
    for (int j = next; j < needed; ++j) chosen[j] = val;
    return chosen;
  }
  const std::vector<int> divs = Divisors(f);
  FactorToDimsByRr(f, left, chosen.data() + next);
  int curbal = chosen[0] - chosen[needed - 1];
  std::vector<int> trydims(left, 0);
  trydims[left - 1] = divs[0];
  OptBalance(nnodes, left - 1, left, divs, trydims.data(), &curbal, chosen.data() + next);
  return chosen;
}

}  // namespace mpigpu::api
