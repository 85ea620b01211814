"""Authorization cost: pod creates/s with ``--authorization-mode=AlwaysAllow`` and with
``Node,RBAC``, in the same run, on the same machine.

Both apiservers authenticate the same static bearer token (user ``bench``), so the difference is
the authorizer alone.  With RBAC, ``bench`` is allowed by a RoleBinding to ``edit`` in
``default``, among ``--noise`` other RoleBindings (in other namespaces) and ClusterRoleBindings
for other users, so a decision that read every binding would show.  Prints one JSON document.

    python -m benchmarks.rbac [--pods 1000] [--concurrency 32] [--noise 500] [--rounds 3]

The modes alternate for ``--rounds`` rounds; each mode's best round is reported with every
round's creates/s (the machine may be busy with other work).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
from pathlib import Path
from typing import Any

import aiohttp

from benchmarks.api import _pod, _run_concurrently
from benchmarks.common import control_plane, percentiles

RBAC = "/apis/rbac.authorization.k8s.io/v1"
REF = {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole"}


async def _setup_rbac(h: aiohttp.ClientSession, noise: int) -> None:
    admin = {"Authorization": "Bearer admin-token", "Content-Type": "application/json"}

    async def post(path: str, body: dict[str, Any]) -> None:
        async with h.post(path, data=json.dumps(body), headers=admin) as r:
            await r.read()
            if r.status not in (201, 409):
                raise RuntimeError(f"{path}: HTTP {r.status}")

    for i in range(noise):
        ns = f"noise-{i % 50}"
        if i < 50:
            await post("/api/v1/namespaces", {"metadata": {"name": ns}})
        await post(f"{RBAC}/namespaces/{ns}/rolebindings", {
            "metadata": {"name": f"rb-{i}"}, "roleRef": {**REF, "name": "edit"},
            "subjects": [{"kind": "User", "apiGroup": REF["apiGroup"], "name": f"user-{i}"}]})
        if i % 5 == 0:
            await post(f"{RBAC}/clusterrolebindings", {
                "metadata": {"name": f"crb-{i}"}, "roleRef": {**REF, "name": "view"},
                "subjects": [{"kind": "Group", "apiGroup": REF["apiGroup"], "name": f"group-{i}"}]})
    await post(f"{RBAC}/namespaces/default/rolebindings", {
        "metadata": {"name": "bench-edit"}, "roleRef": {**REF, "name": "edit"},
        "subjects": [{"kind": "User", "apiGroup": REF["apiGroup"], "name": "bench"}]})


async def bench(url: str, pods: int, concurrency: int, rbac: bool, noise: int) -> dict[str, Any]:
    headers = {"Content-Type": "application/json", "Authorization": "Bearer bench-token"}
    async with aiohttp.ClientSession(url, connector=aiohttp.TCPConnector(limit=concurrency)) as h:
        if rbac:
            await _setup_rbac(h, noise)
            for _ in range(200):  # the binding reaches the cache
                async with h.get("/api/v1/namespaces/default/pods?limit=1", headers=headers) as r:
                    if r.status == 200:
                        break
                await asyncio.sleep(0.05)

        async def create(i: int) -> None:
            async with h.post("/api/v1/namespaces/default/pods", data=json.dumps(_pod(i)), headers=headers) as r:
                await r.read()
                if r.status != 201:
                    raise RuntimeError(f"create failed: HTTP {r.status}")
        await _run_concurrently(min(pods // 10, 100), concurrency, lambda i: create(pods + i))  # warm-up
        elapsed, lat = await _run_concurrently(pods, concurrency, create)
    return {"per_s": round(pods / elapsed, 1), **percentiles(lat)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--pods", type=int, default=1000)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--noise", type=int, default=500)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    out: dict[str, Any] = {"pods": args.pods, "concurrency": args.concurrency, "noise_bindings": args.noise}
    with tempfile.TemporaryDirectory(prefix="minik8s-bench-rbac-") as tmp:
        tokens = Path(tmp) / "tokens.csv"
        tokens.write_text('admin-token,admin,0,"system:masters"\nbench-token,bench,1,""\n')
        runs: dict[str, list[dict[str, Any]]] = {"AlwaysAllow": [], "Node,RBAC": []}
        for _ in range(args.rounds):  # alternating, so that a busy moment of the machine hits both
            for mode in runs:
                with control_plane("--token-auth-file", str(tokens), "--authorization-mode", mode) as (url, _):
                    runs[mode].append(asyncio.run(bench(url, args.pods, args.concurrency, mode != "AlwaysAllow",
                                                        args.noise)))
    for mode, results in runs.items():
        out[mode] = max(results, key=lambda r: r["per_s"])  # each mode's best round
        out[mode]["rounds_per_s"] = [r["per_s"] for r in results]
    out["rbac_vs_always_allow"] = round(out["Node,RBAC"]["per_s"] / out["AlwaysAllow"]["per_s"], 3)
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
