#!/bin/bash
# A stand-in for nvidia-cuda-mps-control in launcher_mps_e2e_test (copied into a directory put
# first on PATH under that name). It appends what happens to $FAKE_MPS_RECORD:
#   start pipe=<CUDA_MPS_PIPE_DIRECTORY> log=<CUDA_MPS_LOG_DIRECTORY>   on `-d`
#   client <command>                                                  a command on stdin
#   stopped                                                           the daemon left on quit
# `-d` starts a daemon the way the real one does (it returns at once; the daemon, a fork, runs on
# reading <pipe>/control, with the pipe variables in its environment). Its name (comm) is this
# file's, "nvidia-cuda-mps", as the real daemon's and server's are.
#   FAKE_MPS_START=fail   -d prints a reason and exits 1, no daemon
#   FAKE_MPS_QUIT=ignore  the daemon does not leave on quit (the launcher must kill it)
# The daemon leaves by itself after 120 s, so a broken test leaves nothing for long.
rec=${FAKE_MPS_RECORD:-/dev/null}
pipe=${CUDA_MPS_PIPE_DIRECTORY:-/tmp/nvidia-mps}
serve() {
  exec 3<> "$pipe/control"  # read-write: never blocks, never sees EOF
  local end=$((SECONDS + 120))
  while [ $SECONDS -lt $end ]; do
    read -r -t 1 line <&3 || continue
    if [ "$line" = quit ] && [ "${FAKE_MPS_QUIT:-}" != ignore ]; then
      rm -f "$pipe/control"
      echo stopped >> "$rec"
      exit 0
    fi
  done
  exit 0
}
case "${1:-}" in
-d)
  echo "start pipe=$pipe log=${CUDA_MPS_LOG_DIRECTORY:-}" >> "$rec"
  if [ "${FAKE_MPS_START:-}" = fail ]; then
    echo "fake-mps: An MPS daemon cannot start here (as told)"
    exit 1
  fi
  mkfifo -m 600 "$pipe/control" || exit 1
  # The daemon: a subshell of this script (a fork, no exec: its name stays this file's).
  serve < /dev/null > /dev/null 2>&1 &
  exit 0 ;;
esac
read -r cmd
echo "client $cmd" >> "$rec"
if [ ! -p "$pipe/control" ]; then
  echo "Cannot find MPS control daemon process" >&2
  exit 1
fi
echo "$cmd" > "$pipe/control"
