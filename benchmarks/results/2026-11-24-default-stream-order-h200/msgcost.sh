#!/usr/bin/env bash
# Instructions per message of one msgcost binary (callgrind; the difference between 2000 and 1000
# messages, so start-up and finalize cancel out), for each mode.
#   msgcost.sh path/to/msgcost
set -eu
bin=$1
count() {  # mode iters -> instructions collected
  valgrind --tool=callgrind --callgrind-out-file=/dev/null "$bin" "$1" "$2" 2>&1 >/dev/null |
    awk '/Collected :/ {print $NF}'
}
for mode in engine api api-blocking; do
  a=$(count $mode 1000); b=$(count $mode 2000)
  echo "$mode $(( (b - a) / 1000 ))"
done
