#!/usr/bin/env bash
# A private, throw-away Slurm cluster on this machine, for tests of srun-started ranks:
#
#   cluster.sh start DIR [NODES [OWNER]]
#                                  DIR must not exist; makes it and starts, from it, a munged
#                                  (its own key and socket), a slurmctld and NODES slurmds
#                                  (default 1; names mg0.., CPUs=4 each, on 127.0.0.1) on ports
#                                  of its own, and waits (30 s at most) until sinfo shows every
#                                  node idle. Prints `export SLURM_CONF=DIR/slurm.conf`.
#                                  Exits 77 with the reason on stderr when the cluster cannot
#                                  exist here (not root, slurm or munge not installed), 1 when
#                                  it should have started and did not (the daemons' logs follow).
#                                  With OWNER (a pid), a watcher stops the cluster within a second
#                                  of OWNER's end, so a test killed at its timeout leaves nothing.
#   cluster.sh exec DIR CMD...     runs CMD where srun must run (the controller's namespace with
#                                  NODES 2; plainly with 1), e.g. `cluster.sh exec DIR srun ...`.
#   cluster.sh stop DIR            ends every daemon it started (by the pids in DIR) and removes
#                                  DIR; safe to call twice or after a failed start.
#
# Nothing outside DIR is read or written (but for a two-node cluster's network namespaces,
# /run/netns/mgsl*, removed on stop): the system's /etc/slurm, /etc/munge and a system slurm's
# ports (6817/6818) are never touched, so it coexists with a real cluster and with other tests'
# clusters. SLURM_SBIN and SLURM_BIN say where the daemons and commands are (/usr/sbin, /usr/bin). Several slurmds on one host need Slurm built with --enable-multiple-slurmd,
# which Debian's is not, so NODES > 1 puts each slurmd in a network namespace of its own
# (root, ip): see start_netns below.
set -uo pipefail

SBIN=${SLURM_SBIN:-/usr/sbin}
BIN=${SLURM_BIN:-/usr/bin}

die_skip() { echo "cluster.sh: cannot run a Slurm cluster here: $*" >&2; exit 77; }

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# The daemons still running: the pids in DIR/pids whose command line names DIR (a reused pid's
# does not).
daemons() {
  local dir=$1 pid
  [ -f "$dir/pids" ] || return 0
  while read -r pid; do
    [ -n "$pid" ] && grep -qF "$dir" "/proc/$pid/cmdline" 2>/dev/null && echo "$pid"
  done <"$dir/pids"
}

# The processes in a live slurmd's mount namespace (DIR/mntns: "<slurmd pid> mnt:[<inode>]"):
# its slurmstepds and their tasks, which outlive a slurmd. Only while that slurmd still holds
# the namespace: a freed namespace's inode number is reused by the next one made (another
# test's ip netns exec), whose processes must never be taken for ours.
members() {
  local dir=$1 pid ns live=""
  [ -f "$dir/mntns" ] || return 0
  while read -r pid ns; do
    grep -qF "$dir" "/proc/$pid/cmdline" 2>/dev/null &&
      [ "$(readlink "/proc/$pid/ns/mnt" 2>/dev/null)" = "$ns" ] && live+="$ns "
  done <"$dir/mntns"
  [ -n "$live" ] || return 0
  # One ls for all: "... /proc/<pid>/ns/mnt -> mnt:[<inode>]".
  ls -l /proc/[0-9]*/ns/mnt 2>/dev/null | awk -v list="$live" '
    BEGIN { n = split(list, a, " "); for (i = 1; i <= n; i++) want[a[i]] = 1 }
    want[$NF] { split($(NF - 2), p, "/"); print p[3] }'
}

# Ends the cluster: SIGKILL to its jobs' processes (found while their slurmds hold the
# namespaces), then TERM to the daemons (2 s, then KILL); removes DIR.
stop() {
  local dir=$1 pid i pids
  [ -d "$dir" ] || return 0
  local keep
  keep=" $(daemons "$dir" | tr '\n' ' ') "
  for pid in $(members "$dir"); do
    [[ "$keep" == *" $pid "* ]] || kill -KILL "$pid" 2>/dev/null
  done
  for i in $(seq 20); do
    pids=$(daemons "$dir")
    [ -z "$pids" ] && break
    for pid in $pids; do kill -TERM "$pid" 2>/dev/null; done
    sleep 0.1
  done
  for pid in $(daemons "$dir"); do kill -KILL "$pid" 2>/dev/null; done
  if [ -f "$dir/netns" ]; then
    local ns
    while read -r ns; do
      ip netns del "$ns" 2>/dev/null
    done <"$dir/netns"
  fi
  rm -rf "$dir"
}

# NODES (2) network namespaces joined by a veth pair, 10.97.<x>.1 and .2/24 (x random, so
# clusters of tests running side by side differ; other tests use 10.93-10.95 and 10.99):
# slurmctld and mg0's slurmd in the first, mg1's in the second. Each slurmd also gets a private
# tmpfs for TmpFS (Slurm's PMIx plugin names its per-step client directory by job and step only).
start_netns() {
  local dir=$1 nodes=$2
  local tag x i
  tag=$(basename "$dir" | tr -dc 'a-zA-Z0-9' | tail -c 6)$$
  x=$(( (RANDOM % 200) + 20 ))
  for i in 0 1; do
    ip netns add "mgsl$tag$i" || { echo "cluster.sh: ip netns add failed" >&2; return 1; }
    echo "mgsl$tag$i" >>"$dir/netns"
    ip -n "mgsl$tag$i" link set lo up
    echo "10.97.$x.$((i + 1))" >>"$dir/node_addrs"
  done
  ip link add "mgv${tag}0" netns "mgsl${tag}0" type veth peer name "mgv${tag}1" netns "mgsl${tag}1" ||
    { echo "cluster.sh: veth failed" >&2; return 1; }
  for i in 0 1; do
    ip -n "mgsl$tag$i" addr add "10.97.$x.$((i + 1))/24" dev "mgv$tag$i"
    ip -n "mgsl$tag$i" link set "mgv$tag$i" up
  done
  echo "10.97.$x.1" >"$dir/ctld_addr"
}

# Runs a command in the controller's network namespace (where srun must run: the slurmds call
# it back), or plainly on a one-node cluster.
in_cluster() {
  local dir=$1; shift
  if [ -f "$dir/netns" ]; then exec nsenter --net="/run/netns/$(head -n 1 "$dir/netns")" "$@"; fi
  exec "$@"
}

logs() {
  local dir=$1 f
  for f in "$dir"/*.log; do
    [ -f "$f" ] || continue
    echo "---- $f (last 30 lines)" >&2
    tail -n 30 "$f" >&2
  done
}

start() {
  local dir=$1 nodes=${2:-1} owner=${3:-}
  [ "$(id -u)" -eq 0 ] || die_skip "not root (slurmd must run as root to start tasks as the user)"
  local p
  for p in "$SBIN/slurmctld" "$SBIN/slurmd" "$SBIN/munged" "$BIN/srun" "$BIN/sinfo"; do
    [ -x "$p" ] || die_skip "$p is missing (Debian: slurmctld slurmd slurm-client munge)"
  done
  command -v unshare >/dev/null || die_skip "no unshare (util-linux)"
  case "$nodes" in 1) ;; 2)
    command -v ip >/dev/null && command -v nsenter >/dev/null && command -v unshare >/dev/null ||
      die_skip "no ip (iproute2) or nsenter/unshare (util-linux): no network namespaces" ;;
    *) echo "cluster.sh: NODES must be 1 or 2" >&2; exit 2 ;;
  esac
  ls /usr/lib/*/slurm-wlm/mpi_pmix*.so >/dev/null 2>&1 ||
    die_skip "Slurm's PMIx plugin (mpi_pmix_v4.so, Debian: slurm-wlm-basic-plugins) is missing"
  [ ! -e "$dir" ] || { echo "cluster.sh: $dir exists" >&2; exit 2; }
  mkdir -p "$dir" || exit 1
  mkdir -p "$dir/state" "$dir/munge" "$dir/tmp-node" && chmod 711 "$dir" "$dir/munge"
  : >"$dir/pids"

  # munge: a fresh key, its own socket, log, pid and seed; -f since DIR may sit under a
  # world-writable /tmp (sticky) that munged's directory checks dislike.
  dd if=/dev/urandom of="$dir/munge/munge.key" bs=1024 count=1 status=none && chmod 400 "$dir/munge/munge.key"
  "$SBIN/munged" -f --key-file="$dir/munge/munge.key" --socket="$dir/munge/munge.sock" \
    --pid-file="$dir/munge/munged.pid" --log-file="$dir/munged.log" --seed-file="$dir/munge/seed" \
    --num-threads=2 </dev/null >>"$dir/munged.log" 2>&1
  local i
  for i in $(seq 50); do [ -s "$dir/munge/munged.pid" ] && [ -S "$dir/munge/munge.sock" ] && break; sleep 0.1; done
  if [ ! -s "$dir/munge/munged.pid" ]; then
    echo "cluster.sh: munged did not start" >&2; logs "$dir"; return 1
  fi
  cat "$dir/munge/munged.pid" >>"$dir/pids"

  local ctld_port slurmd_port
  ctld_port=$(free_port) && slurmd_port=$(free_port) || return 1
  local ctld_addr=127.0.0.1 node_lines="" names=""
  if [ "$nodes" -gt 1 ]; then
    start_netns "$dir" "$nodes" || return 1
    ctld_addr=$(cat "$dir/ctld_addr")
  fi
  for i in $(seq 0 $((nodes - 1))); do
    local addr=127.0.0.1
    [ "$nodes" -gt 1 ] && addr=$(sed -n "$((i + 1))p" "$dir/node_addrs")
    node_lines+="NodeName=mg$i NodeAddr=$addr NodeHostname=mg$i CPUs=4 RealMemory=1000 State=UNKNOWN"$'\n'
    names+="${names:+,}mg$i"
  done
  cat >"$dir/slurm.conf" <<CONF
# Generated by tests/slurm/cluster.sh: a private test cluster in $dir.
ClusterName=mpigputest
SlurmctldHost=$(hostname -s)($ctld_addr)
MailProg=/bin/true
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$dir/munge/munge.sock
CredType=cred/munge
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool-%n
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd-%n.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd-%n.log
SlurmctldDebug=info
SlurmdDebug=info
TmpFS=$dir/tmp-node
ProctrackType=proctrack/pgid
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SlurmdParameters=config_overrides
SwitchType=switch/none
MpiDefault=none
ReturnToService=2
SlurmdTimeout=30
InactiveLimit=0
KillWait=2
MinJobAge=10
$node_lines
PartitionName=debug Nodes=$names Default=YES MaxTime=10 State=UP OverSubscribe=NO
CONF
  export SLURM_CONF=$dir/slurm.conf
  if [ "$nodes" -gt 1 ]; then
    nsenter --net="/run/netns/$(head -n 1 "$dir/netns")" \
      "$SBIN/slurmctld" -D -i -f "$dir/slurm.conf" >>"$dir/slurmctld.out" 2>&1 &
  else
    "$SBIN/slurmctld" -D -i -f "$dir/slurm.conf" >>"$dir/slurmctld.out" 2>&1 &
  fi
  echo $! >>"$dir/pids"
  # Each slurmd in a mount namespace of its own (its stepds and tasks too, which is how stop
  # finds them) with a private tmpfs for TmpFS; with 2 nodes in its network namespace, entered
  # by nsenter, not ip netns exec (whose fresh /sys lacks the cgroup mount slurmd needs).
  for i in $(seq 0 $((nodes - 1))); do
    local enter=()
    [ "$nodes" -gt 1 ] && enter=(nsenter --net="/run/netns/$(sed -n "$((i + 1))p" "$dir/netns")")
    "${enter[@]}" unshare -m --propagation slave sh -c \
      'mount -t tmpfs -o mode=1777,size=64m mgslurm "$1" && exec "$2" -D -N "$3" -f "$4"' sh \
      "$dir/tmp-node" "$SBIN/slurmd" "mg$i" "$dir/slurm.conf" >>"$dir/slurmd-mg$i.out" 2>&1 &
    echo $! >>"$dir/pids"
    local t
    for t in $(seq 50); do  # the namespace is the slurmd's once unshare has run
      local ns
      ns=$(readlink "/proc/$!/ns/mnt" 2>/dev/null)
      [ -n "$ns" ] && [ "$ns" != "$(readlink /proc/$$/ns/mnt)" ] && { echo "$! $ns" >>"$dir/mntns"; break; }
      sleep 0.02
    done
  done
  # Bounded by the clock (sinfo itself may wait on a controller that is not up yet); ends early
  # when a daemon died.
  local deadline=$((SECONDS + 30)) idle pid
  while [ $SECONDS -lt $deadline ]; do
    idle=$( (in_cluster "$dir" timeout 5 "$BIN/sinfo" -h -N -o '%N %t') 2>/dev/null | grep -c ' idle$')
    if [ "$idle" = "$nodes" ]; then
      [ -n "$owner" ] && setsid "$0" watch "$dir" "$owner" </dev/null >/dev/null 2>&1 &
      echo "export SLURM_CONF=$dir/slurm.conf"
      return 0
    fi
    while read -r pid; do
      kill -0 "$pid" 2>/dev/null || { echo "cluster.sh: a daemon (pid $pid) ended" >&2; deadline=0; }
    done <"$dir/pids"
    sleep 0.2
  done
  echo "cluster.sh: the nodes did not become idle within 30 s:" >&2
  (in_cluster "$dir" timeout 5 "$BIN/sinfo" -N) >&2
  logs "$dir"
  for f in "$dir"/*.out; do echo "---- $f" >&2; tail -n 20 "$f" >&2; done
  return 1
}

case "${1:-}" in
  start) [ $# -ge 2 ] || { echo "usage: cluster.sh start DIR [NODES [OWNER]]" >&2; exit 2; }
         start "$2" "${3:-1}" "${4:-}" || { stop "$2"; exit 1; } ;;
  exec) [ $# -ge 3 ] || { echo "usage: cluster.sh exec DIR COMMAND..." >&2; exit 2; }
        dir=$2; shift 2; in_cluster "$dir" "$@" ;;
  watch) while [ -d "$2" ] && kill -0 "$3" 2>/dev/null; do sleep 1; done
         stop "$2" ;;
  stop) [ $# -eq 2 ] || { echo "usage: cluster.sh stop DIR" >&2; exit 2; }
        stop "$2" ;;
  *) echo "usage: cluster.sh start DIR [NODES [OWNER]] | exec DIR CMD... | stop DIR" >&2; exit 2 ;;
esac
