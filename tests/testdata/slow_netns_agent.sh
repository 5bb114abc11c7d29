#!/bin/sh
# netns_agent.sh, started late on purpose: writes the boot server's address (from the command it
# was given) to $SLOW_AGENT_DIR/boot-addr, then waits (at most 30 s) for $SLOW_AGENT_DIR/go, made
# by the test once whatever it wants in place during a slow remote start is there.
dir=$SLOW_AGENT_DIR
addr=$(printf '%s\n' "$*" | sed -n 's/.*MPIGPU_BOOT_ADDR=\([0-9.:]*\).*/\1/p')
printf '%s\n' "$addr" > "$dir/boot-addr.tmp" && mv "$dir/boot-addr.tmp" "$dir/boot-addr"
i=0
while [ ! -e "$dir/go" ] && [ $i -lt 3000 ]; do
  sleep 0.01
  i=$((i + 1))
done
exec "$(dirname "$0")/netns_agent.sh" "$@"
