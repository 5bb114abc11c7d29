#!/bin/sh
# A launch agent for hosts that are network namespaces of this machine (mpigpurun --launch-agent,
# as Open MPI's plm_rsh_agent): NETNS_AGENT_MAP="addr=namespace,..." names each host's namespace;
# the command runs there, as `ssh host command` would on that host.
host=$1
shift
ns=$(printf '%s\n' "$NETNS_AGENT_MAP" | tr ',' '\n' | sed -n "s/^$host=//p")
if [ -z "$ns" ]; then
  echo "netns_agent: no namespace for host '$host'" >&2
  exit 255
fi
exec ip netns exec "$ns" sh -c "exec $*"
