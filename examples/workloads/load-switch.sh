#!/bin/sh
# Switch the CPU load of examples/workloads/cpu-burner.yaml on or off on this node.
#   load-switch.sh on|off|status   (directory: $MINIK8S_LOAD_DIR, default /tmp/minik8s-load)
set -eu
dir="${MINIK8S_LOAD_DIR:-/tmp/minik8s-load}"
mkdir -p "$dir"
case "${1:-status}" in
    on) touch "$dir/on"; echo "load on ($dir/on)";;
    off) rm -f "$dir/on"; echo "load off";;
    status) if [ -e "$dir/on" ]; then echo on; else echo off; fi;;
    *) echo "usage: $0 on|off|status" >&2; exit 2;;
esac
