#!/bin/bash
# per-CPU user/system/softirq jiffies during one run
snap() { awk '/^cpu[0-9]/ {print $1, $2, $4, $8}' /proc/stat; }
a=$(snap)
r=$(MPIGPU_NET_SOCKBUF=${SB:-0} MPIGPU_SHM=0 timeout 120 bazel-bin/tools/mpigpurun -n 2 --bind-to core bazel-bin/tools/mpigpu-sweep bw H H -m 16M:16M -W 8 -i 5 -x 1 --no-limits --no-peers 2>&1 | grep -E "^ *16777216" | awk '{print $2}')
b=$(snap)
paste <(echo "$a") <(echo "$b") | awk -v r="$r" 'BEGIN{printf "bw %s GB/s |", r} {printf " %s usr %d sys %d sirq %d |", $1, $6-$2, $7-$3, $8-$4} END{print ""}'
