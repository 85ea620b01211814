#!/usr/bin/env bash
# One virtualenv per pinned client test suite (tests/conformance): .venv/conformance/<suite> with the
# suite's own library at its pinned version and its test tools, from
# tests/conformance/requirements/<suite>.txt (kubernetes_asyncio 36.1.0, lightkube 0.21.0,
# kopf 1.44.6). minik8s' own .venv keeps its newer kopf and lightkube. Idempotent: a virtualenv
# whose requirements file has not changed since it was made is kept. Called by scripts/install.sh.
set -euo pipefail
cd "$(dirname "$0")/.."

PY=${PYTHON:-python3}
for req in tests/conformance/requirements/*.txt; do
  suite="$(basename "$req" .txt)"
  venv=".venv/conformance/$suite"
  if [ -x "$venv/bin/python" ] && cmp -s "$req" "$venv/requirements.txt"; then
    continue
  fi
  echo "install: $venv (tests/conformance, $req)"
  rm -rf "$venv"
  "$PY" -m venv "$venv"
  "$venv/bin/python" -m pip install -q --upgrade pip >/dev/null
  "$venv/bin/python" -m pip install -q -r "$req"
  cp "$req" "$venv/requirements.txt"
done
