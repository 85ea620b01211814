#!/usr/bin/env bash
# The main job: install what is needed, bring up a local minik8s cluster, run the example
# pods on it and show them Running with their IPs.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh
export PATH="$PWD/.venv/bin:$PATH"
minik8s up
export KUBECONFIG="$HOME/.minik8s/kubeconfig"
kubectl apply -f examples/pods/
echo "waiting for the example pods ..."
for _ in $(seq 1 90); do
  running=$(kubectl get pods -o name --field-selector status.phase=Running | wc -l)
  [ "$running" -ge 5 ] && break
  sleep 2
done
kubectl get pods -o wide
echo
echo "The cluster keeps running: export PATH=\$PWD/.venv/bin:\$PATH KUBECONFIG=$KUBECONFIG; kubectl get pods"
echo "Stop it with: minik8s down   (or: minik8s down --purge)"
