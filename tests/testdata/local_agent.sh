#!/bin/sh
# A launch agent for tests without a second machine (mpigpurun --launch-agent): runs the remote
# command here, as `ssh host command` would there. With LOCAL_AGENT_LOG set it appends its
# arguments (one line) to that file, so a test can check what an agent's command line shows.
host=$1
shift
if [ -n "$LOCAL_AGENT_LOG" ]; then
  printf '%s\n' "$host $*" >> "$LOCAL_AGENT_LOG"
fi
exec sh -c "exec $*"  # "exec": the agent becomes the rank, as signals to it must reach the rank
