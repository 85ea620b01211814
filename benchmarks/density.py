"""Density and scheduler throughput on hollow nodes (a benchmark, not a timed test).

For each scale (nodes, pods) a fresh local control plane is started in a temp dir — etcd, the
apiserver, the scheduler and the controller-manager (deployment, replicaset, nodeipam and
nodelifecycle controllers; ``--cluster-cidr 10.64.0.0/10`` so 1,000+ nodes each get a /24) as
real processes — plus ``minik8s hollow-node --count N`` (the simulator: Nodes, Leases and
pod statuses without containers).  Once every hollow node is Ready, Deployments of 50 replicas
whose pods tolerate ``minik8s.io/hollow=true:NoSchedule`` are created at once, and:

- **pod startup latency** p50/p99: from the watch event that first shows a pod (created by
  the ReplicaSet controller) to the watch event that shows it Running (ClusterLoader2's
  "create → Running as seen by a watch");
- **scheduler throughput**: pods bound per second, from the first to the last watch event
  showing ``spec.nodeName`` set (and the best one-second window);
- **API call latency** p99 per verb, measured client-side (the apiserver has no request
  duration histogram): a probe creates, gets, patches, updates, lists and deletes a
  ConfigMap every 0.1 s and lists the benchmark's pods every 2 s while the pods start;
- **RSS** peaks of etcd, the apiserver, scheduler, controller-manager and hollow-node
  (``/proc/<pid>/status`` VmRSS, sampled every second).

Targets (Kubernetes SLOs / the issue): pod startup p99 <= 5 s, mutating API p99 <= 1 s,
scheduler >= 300 pods/s at 1,000 nodes.  Prints one JSON document and a Markdown table.

    nice -n 10 python -m benchmarks.density [--scales 10x300,100x3000,1000x5000]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import time
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from benchmarks.common import percentiles
from minik8s.client.kubeconfig import load, render
from minik8s.client.rest import Client
from minik8s.cluster.processes import Process, etcd_command, free_port, minik8s_command, wait_http

NAMESPACE = "density"
REPLICAS_PER_DEPLOYMENT = 50
TOLERATION = {"key": "minik8s.io/hollow", "operator": "Exists", "effect": "NoSchedule"}


@contextmanager
def cluster(nodes: int, workdir: Path, hold_scheduler: bool = False) -> Iterator[tuple[Path, dict[str, Process]]]:
    """etcd, apiserver, scheduler (not started when ``hold_scheduler``), controller-manager and
    ``hollow-node --count nodes``; yields (kubeconfig, processes by name)."""
    etcd_port, peer, port = free_port(), free_port(), free_port()
    procs: dict[str, Process] = {}
    try:
        procs["etcd"] = Process("etcd", etcd_command(workdir / "etcd", etcd_port, peer), workdir / "etcd.log")
        procs["etcd"].start()
        wait_http(f"http://127.0.0.1:{etcd_port}/health")
        procs["apiserver"] = Process("apiserver", minik8s_command(
            "apiserver", "--etcd-servers", f"http://127.0.0.1:{etcd_port}", "--port", str(port),
            "--metrics-resolution", "1h"), workdir / "apiserver.log")  # hollow nodes have no stats to scrape
        procs["apiserver"].start()
        wait_http(f"http://127.0.0.1:{port}/readyz", timeout=60)
        kubeconfig = workdir / "kubeconfig"
        kubeconfig.write_text(render(f"http://127.0.0.1:{port}"))
        kc = ["--kubeconfig", str(kubeconfig)]
        procs["scheduler"] = Process("scheduler", minik8s_command("scheduler", *kc), workdir / "scheduler.log")
        procs["controller-manager"] = Process("controller-manager", minik8s_command(
            "controller-manager", *kc, "--controllers", "deployment,replicaset,nodeipam,nodelifecycle",
            "--cluster-cidr", "10.64.0.0/10", "--concurrent-workers", "10"), workdir / "controller-manager.log")
        procs["hollow-node"] = Process("hollow-node", minik8s_command("hollow-node", "--count", str(nodes), *kc),
                                       workdir / "hollow-node.log")
        for name in ("controller-manager", "hollow-node") if hold_scheduler else \
                ("scheduler", "controller-manager", "hollow-node"):
            procs[name].start()
        yield kubeconfig, procs
    finally:
        for proc in reversed(list(procs.values())):
            proc.stop()


def rss_mib(pid: int | None) -> float:
    """Resident set size of ``pid`` in MiB (0 when gone)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except (OSError, ValueError):
        pass
    return 0.0


def deployment(name: str, replicas: int) -> dict[str, Any]:
    labels = {"app": name, "bench": "density"}
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": labels},
                                  "spec": {"tolerations": [TOLERATION], "terminationGracePeriodSeconds": 1,
                                           "containers": [{"name": "pause", "image": "minik8s/pause:latest",
                                                           "resources": {"requests": {"cpu": "10m",
                                                                                      "memory": "16Mi"}}}]}}}}


async def wait_nodes_ready(client: Client, n: int, timeout: float) -> float:
    """Seconds until ``n`` hollow Nodes are Ready (raises TimeoutError)."""
    t0 = time.perf_counter()
    rt = client.kind("v1", "Node")
    while time.perf_counter() - t0 < timeout:
        items = (await client.list(rt, label_selector="minik8s.io/hollow=true"))["items"]
        ready = sum(1 for node in items if any(c.get("type") == "Ready" and c.get("status") == "True"
                                               for c in node["status"].get("conditions") or []))
        if ready >= n:
            return time.perf_counter() - t0
        await asyncio.sleep(1.0)
    raise TimeoutError(f"only {ready} of {n} hollow nodes Ready after {timeout:.0f}s")


async def probe(client: Client, stop: asyncio.Event, samples: dict[str, list[float]]) -> None:
    """ConfigMap create/get/patch/update/list/delete every 0.1 s; pod LIST every 2 s."""
    rt, pods = client.kind("v1", "ConfigMap"), client.kind("v1", "Pod")
    i = 0
    last_pod_list = 0.0

    async def timed(verb: str, call: Any) -> Any:
        t0 = time.perf_counter()
        out = await call
        samples[verb].append(time.perf_counter() - t0)
        return out

    while not stop.is_set():
        name = f"probe-{i}"
        i += 1
        try:
            cm = await timed("POST", client.create(rt, {"metadata": {"name": name}, "data": {"k": "v"}}, NAMESPACE))
            cm = await timed("GET", client.get(rt, name, NAMESPACE))
            cm = await timed("PATCH", client.patch(rt, name, {"data": {"k": "w"}}, NAMESPACE))
            cm["data"]["k"] = "x"
            await timed("PUT", client.update(rt, cm))
            await timed("LIST configmaps", client.list(rt, NAMESPACE))
            await timed("DELETE", client.delete(rt, name, NAMESPACE))
            if time.perf_counter() - last_pod_list > 2.0:
                last_pod_list = time.perf_counter()
                await timed("LIST pods", client.list(pods, NAMESPACE))
        except Exception as exc:  # noqa: BLE001 - counted, the run goes on
            samples["errors"].append(0.0)
            print(f"probe error: {exc}")
        await asyncio.sleep(0.1)


async def measure(kubeconfig: Path, procs: dict[str, Process], nodes: int, pods: int,
                  timeout: float, hold: bool) -> dict[str, Any]:
    """One scale: wait for the nodes, start ``pods`` pods, collect the figures.  ``hold``:
    the scheduler (not running yet) is started once every pod exists and waits (Pending)."""
    async with Client(load(str(kubeconfig))) as client:
        nodes_ready_s = await wait_nodes_ready(client, nodes, timeout)
        await client.create(client.kind("v1", "Namespace"), {"metadata": {"name": NAMESPACE}})
        pod_rt = client.kind("v1", "Pod")
        rv = (await client.list(pod_rt, NAMESPACE))["metadata"]["resourceVersion"]
        seen: dict[str, float] = {}
        bound: dict[str, float] = {}
        running: dict[str, float] = {}
        done = asyncio.Event()
        all_created = asyncio.Event()

        async def watch() -> None:
            while True:
                async for ev in client.watch(pod_rt, NAMESPACE, resource_version=rv, label_selector="bench=density"):
                    obj = ev.get("object") or {}
                    uid = (obj.get("metadata") or {}).get("uid")
                    if not uid or ev.get("type") == "ERROR":
                        continue
                    now = time.perf_counter()
                    seen.setdefault(uid, now)
                    if len(seen) >= pods:
                        all_created.set()
                    if (obj.get("spec") or {}).get("nodeName"):
                        bound.setdefault(uid, now)
                    if (obj.get("status") or {}).get("phase") == "Running":
                        running.setdefault(uid, now)
                        if len(running) >= pods:
                            done.set()
                            return

        rss: dict[str, float] = defaultdict(float)
        stop = asyncio.Event()

        async def sample_rss() -> None:
            while not stop.is_set():
                for name, proc in procs.items():
                    rss[name] = max(rss[name], rss_mib(proc.pid))
                await asyncio.sleep(1.0)

        samples: dict[str, list[float]] = defaultdict(list)
        tasks = [asyncio.create_task(watch()), asyncio.create_task(sample_rss()),
                 asyncio.create_task(probe(client, stop, samples))]
        await asyncio.sleep(1.0)  # the probe's baseline, the watch established
        t0 = time.perf_counter()
        dep_rt = client.kind("apps/v1", "Deployment")
        full, rest = divmod(pods, REPLICAS_PER_DEPLOYMENT)
        sizes = [REPLICAS_PER_DEPLOYMENT] * full + ([rest] if rest else [])
        await asyncio.gather(*(client.create(dep_rt, deployment(f"d{i}", n), NAMESPACE) for i, n in enumerate(sizes)))
        released = None
        if hold:
            await asyncio.wait_for(all_created.wait(), timeout)
            released = time.perf_counter() - t0
            procs["scheduler"].start()
        try:
            await asyncio.wait_for(done.wait(), timeout)
        except TimeoutError:
            pass
        wall = time.perf_counter() - t0
        stop.set()
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    startup = [running[u] - seen[u] for u in running if u in seen]
    binds = sorted(bound.values())
    per_second: dict[int, int] = defaultdict(int)
    for t in binds:
        per_second[int(t - binds[0])] += 1
    throughput = round((len(binds) - 1) / (binds[-1] - binds[0]), 1) if len(binds) > 1 and binds[-1] > binds[0] \
        else None
    api = {verb: percentiles(v) for verb, v in samples.items() if verb != "errors"}
    mutating = [x for verb in ("POST", "PATCH", "PUT", "DELETE") for x in samples.get(verb, [])]
    return {
        "mode": "throughput" if hold else "density", "scheduler_started_after_s":
            round(released, 1) if released is not None else None,
        "nodes": nodes, "pods": pods, "nodes_ready_s": round(nodes_ready_s, 1), "wall_s": round(wall, 1),
        "running": len(running), "bound": len(binds),
        "pod_startup": percentiles(startup),
        "scheduler_pods_per_s": throughput, "scheduler_best_1s": max(per_second.values()) if per_second else 0,
        "api_latency": api, "api_mutating": percentiles(mutating), "api_errors": len(samples.get("errors", [])),
        "rss_mib": {k: round(v, 1) for k, v in rss.items()},
    }


def table(results: list[dict[str, Any]]) -> str:
    """A Markdown table of the headline figures."""
    rows = ["| mode | nodes | pods | all Running | startup p50 / p99 (s) | scheduler pods/s (best 1 s) | "
            "mutating API p99 (ms) | GET p99 | LIST pods p99 | apiserver / etcd RSS (MiB) |",
            "|---|---|---|---|---|---|---|---|---|---|"]
    for r in results:
        s, api = r["pod_startup"], r["api_latency"]
        rows.append(
            f"| {r['mode']} | {r['nodes']} | {r['pods']} | {r['running']}/{r['pods']} in {r['wall_s']} s | "
            f"{s.get('p50_ms', 0) / 1000:.2f} / {s.get('p99_ms', 0) / 1000:.2f} | "
            f"{r['scheduler_pods_per_s']} ({r['scheduler_best_1s']}) | {r['api_mutating'].get('p99_ms')} | "
            f"{api.get('GET', {}).get('p99_ms')} | {api.get('LIST pods', {}).get('p99_ms')} | "
            f"{r['rss_mib'].get('apiserver')} / {r['rss_mib'].get('etcd')} |")
    return "\n".join(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scales", default="10x300,100x3000,1000x5000,10x300:t,100x3000:t,1000x5000:t",
                        help="comma list of NODESxPODS[:t] (default: %(default)s); ':t' = throughput: the "
                             "scheduler starts once every pod exists (pure scheduling rate)")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds per phase")
    parser.add_argument("--keep", action="store_true", help="keep the temp dirs (logs) and print their paths")
    args = parser.parse_args()
    results = []
    for scale in args.scales.split(","):
        scale, _, mode = scale.partition(":")
        nodes, _, pods = scale.partition("x")
        tmp = tempfile.mkdtemp(prefix="minik8s-density-") if args.keep else None
        with tempfile.TemporaryDirectory(prefix="minik8s-density-") as auto:
            workdir = Path(tmp or auto)
            with cluster(int(nodes), workdir, hold_scheduler=mode == "t") as (kubeconfig, procs):
                result = asyncio.run(measure(kubeconfig, procs, int(nodes), int(pods), args.timeout, mode == "t"))
            if tmp:
                result["workdir"] = tmp
        results.append(result)
        print(json.dumps(result), flush=True)
    density = [r for r in results if r["mode"] == "density"]
    through = [r for r in results if r["mode"] == "throughput"]
    targets: dict[str, bool] = {
        "pod_startup_p99<=5s": all(r["pod_startup"].get("p99_ms", 1e9) <= 5000 for r in density),
        "mutating_api_p99<=1s": all((r["api_mutating"].get("p99_ms") or 1e9) <= 1000 for r in results),
    }
    for r in through:
        targets[f"scheduler>=300pods/s@{r['nodes']}nodes"] = (r["scheduler_pods_per_s"] or 0) >= 300
    print(json.dumps({"results": results, "targets": targets}, indent=2))
    print(table(results))


if __name__ == "__main__":
    main()
