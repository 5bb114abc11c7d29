#!/bin/sh
# Open MPI's plm_rsh_agent for hosts that are network namespaces of this machine (as ssh would
# be on real hosts): NETNS_AGENT_MAP="addr=namespace,..." names each host's namespace; the
# command (Open MPI's orted) runs there under a host name of its own (the namespace's), so that
# the hosts differ by name as real ones do.
host=$1
shift
ns=$(printf '%s\n' "$NETNS_AGENT_MAP" | tr ',' '\n' | sed -n "s/^$host=//p")
if [ -z "$ns" ]; then
  echo "pmix_netns_agent: no namespace for host '$host'" >&2
  exit 255
fi
# The command is a shell line (Open MPI may put "PATH=...; export PATH; ..." before orted).
exec ip netns exec "$ns" unshare --uts sh -c "hostname $ns; $*"
