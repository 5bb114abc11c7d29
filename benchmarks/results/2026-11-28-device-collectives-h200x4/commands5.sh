#!/usr/bin/env bash
# The fifth set: the engine-level D->D pingpong at 941dc8c (old), 486a8dd (the back-end
# refactor merged), d5f7ef3 (every merge, before the copier release) and d105f89 (new), two
# rounds in rotating order. Output in $OUT/out.tgz.
set -u
D=/tmp/mpigpu-out; rm -rf "$D"; mkdir -p "$D"
pack() { tar czf "$OUT/out.tgz" -C "$D" .; }
trap pack EXIT
export NCCL_NVLS_ENABLE=0; [ "$(nvidia-smi -L | wc -l)" -ge 2 ] && export CUDA_VISIBLE_DEVICES=0,1
run() { timeout 30 gpu-bundle/$1/mpigpurun -n 2 --bind-to core gpu-bundle/$1/pingpong D D 64; }
for order in "old 486a8dd d5f7ef3 bin" "bin d5f7ef3 486a8dd old"; do
  for b in $order; do echo "== $b"; run $b; done
done >"$D/bisect.txt" 2>&1
echo done
