"""kube-proxy figures: network programming latency and the cost of going through a ClusterIP.

Starts its own etcd + apiserver (temp dir), a Docker bridge network of its own (a free
``10.244.Y.0/24``) with busybox httpd backends, and one ``minik8s proxy`` process with its
own chain prefix and service CIDR slice (``10.96.X.0/24``).  Measures, in the same run:

* programming latency: Endpoints update accepted by the API → the new endpoint set is
  visible in ``iptables-save -t nat`` (polled every 5 ms), back to back (changes as fast as
  they are programmed: includes the ``--min-sync-period`` 0.1 s rate limit) and spaced
  (0.3 s apart: the event → rule path alone);
* requests/s of one-connection-per-request HTTP GETs through the ClusterIP versus straight
  to the pod IPs (round robin), by a bounded asyncio load generator (``--concurrency``
  workers, ``--requests`` per target, at most 5,000 in total, each target time-boxed).

Traffic goes only to our containers and our ClusterIP.  Everything is removed at the end
(``minik8s proxy --cleanup``, containers, network).  Prints one JSON document.
Target: programming latency p99 <= 1 s.

    python -m benchmarks.proxy [--changes 30] [--requests 2000] [--concurrency 8] [--backends 3]
"""

from __future__ import annotations

import argparse
import asyncio
import ipaddress
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import docker
from docker.types import IPAMConfig, IPAMPool

from benchmarks.common import control_plane, percentiles
from minik8s.client.kubeconfig import ClientConfig, render
from minik8s.client.rest import Client
from minik8s.proxy.config import ProxyConfig
from minik8s.proxy.iptables import programmed_endpoints

IMAGE = "minik8s/busybox:latest"
MAX_REQUESTS = 5000
TIME_BOX = 30.0  # seconds per throughput target


def _iptables_nat() -> str:
    return subprocess.run(["iptables-save", "-t", "nat"], capture_output=True, text=True, check=True).stdout


def _free_subnet(engine: docker.DockerClient) -> tuple[str, str]:
    used = [ipaddress.ip_network(c["Subnet"], strict=False) for n in engine.networks.list()
            for c in ((n.attrs.get("IPAM") or {}).get("Config") or []) if c.get("Subnet")]
    for third in random.sample(range(230, 255), 25):
        net = ipaddress.ip_network(f"10.244.{third}.0/24")
        if not any(net.overlaps(u) for u in used):
            return str(net), str(net.network_address + 1)
    raise RuntimeError("no free 10.244.x.0/24 subnet")


def _free_slice() -> int:
    routes = subprocess.run(["ip", "-4", "route", "show"], capture_output=True, text=True).stdout
    used = {line.split()[0] for line in routes.splitlines() if line}
    return random.choice([x for x in range(100, 255) if f"10.96.{x}.0/24" not in used])


async def _get(host: str, port: int, timeout: float = 5.0) -> bytes:
    """One HTTP/1.0 GET on a new connection; returns the body."""
    async def go() -> bytes:
        reader, writer = await asyncio.open_connection(host, port)
        try:
            writer.write(b"GET / HTTP/1.0\r\nHost: bench\r\n\r\n")
            data = await reader.read()
        finally:
            writer.close()
        return data.partition(b"\r\n\r\n")[2]
    return await asyncio.wait_for(go(), timeout)


async def load(targets: list[tuple[str, int]], requests: int, concurrency: int) -> dict[str, Any]:
    """``requests`` GETs over ``concurrency`` workers, cycling through ``targets``; time-boxed."""
    counter = iter(range(requests))
    latencies: list[float] = []
    errors = 0
    deadline = time.perf_counter() + TIME_BOX

    async def worker() -> None:
        nonlocal errors
        for i in counter:
            if time.perf_counter() > deadline:
                return
            host, port = targets[i % len(targets)]
            t0 = time.perf_counter()
            try:
                await _get(host, port)
            except (OSError, TimeoutError):
                errors += 1
                continue
            latencies.append(time.perf_counter() - t0)

    t0 = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    elapsed = time.perf_counter() - t0
    return {"requests": len(latencies), "errors": errors, "seconds": round(elapsed, 3),
            "rps": round(len(latencies) / elapsed, 1), "latency": percentiles(latencies)}


def _merge(runs: list[dict[str, Any]]) -> dict[str, Any]:
    requests = sum(r["requests"] for r in runs)
    seconds = sum(r["seconds"] for r in runs)
    return {"requests": requests, "errors": sum(r["errors"] for r in runs), "seconds": round(seconds, 3),
            "rps": round(requests / seconds, 1) if seconds else 0.0,
            "rounds_rps": [r["rps"] for r in runs], "p50_ms_per_round": [r["latency"].get("p50_ms") for r in runs]}


async def programming_latency(client: Client, cfg: ProxyConfig, ns: str, cluster_ip: str, ips: list[str],
                              changes: int, spacing: float) -> list[float]:
    """Seconds from each Endpoints update (before the call) to the matching nat rules."""
    rt = client.kind("v1", "Endpoints")
    key = f"{cluster_ip}:80/tcp"
    samples = []
    for i in range(changes):
        subset = ips[: 1 + i % len(ips)] if i % 2 else [ips[i % len(ips)]]
        current = await client.get(rt, "web", ns)
        body = {"metadata": {"name": "web", "namespace": ns,
                             "resourceVersion": current["metadata"]["resourceVersion"]},
                "subsets": [{"addresses": [{"ip": ip} for ip in subset],
                             "ports": [{"name": "http", "port": 8080, "protocol": "TCP"}]}]}
        want = sorted(f"{ip}:8080" for ip in subset)
        if programmed_endpoints(_iptables_nat(), cfg).get(key) == want:
            continue  # no change to program
        t0 = time.perf_counter()
        await client.update(rt, body)
        while programmed_endpoints(await asyncio.to_thread(_iptables_nat), cfg).get(key) != want:
            if time.perf_counter() - t0 > 10:
                raise TimeoutError(f"endpoints {want} not programmed in 10 s")
            await asyncio.sleep(0.005)
        samples.append(time.perf_counter() - t0)
        await asyncio.sleep(spacing)
    return samples


async def scenario(server: str, cfg: ProxyConfig, third: int, ips: list[str], args: argparse.Namespace,
                   ) -> dict[str, Any]:
    async with Client(ClientConfig(server=server)) as client:
        ns = "bench-proxy"
        await client.create(client.kind("v1", "Namespace"), {"metadata": {"name": ns}})
        svc = await client.create(client.kind("v1", "Service"), {
            "metadata": {"name": "web", "namespace": ns},
            "spec": {"clusterIP": f"10.96.{third}.10",
                     "ports": [{"name": "http", "port": 80, "targetPort": 8080, "protocol": "TCP"}]}}, ns)
        cluster_ip = svc["spec"]["clusterIP"]
        await client.create(client.kind("v1", "Endpoints"), {
            "metadata": {"name": "web", "namespace": ns},
            "subsets": [{"addresses": [{"ip": ip} for ip in ips],
                         "ports": [{"name": "http", "port": 8080, "protocol": "TCP"}]}]}, ns)
        want = sorted(f"{ip}:8080" for ip in ips)
        for _ in range(3000):  # the proxy's first sync (start-up is not part of the latency)
            if programmed_endpoints(_iptables_nat(), cfg).get(f"{cluster_ip}:80/tcp") == want:
                break
            await asyncio.sleep(0.01)
        back_to_back = await programming_latency(client, cfg, ns, cluster_ip, ips, args.changes, 0.0)
        spaced = await programming_latency(client, cfg, ns, cluster_ip, ips, args.changes, 0.3)

        # all backends again, then throughput
        rt = client.kind("v1", "Endpoints")
        current = await client.get(rt, "web", ns)
        current["subsets"] = [{"addresses": [{"ip": ip} for ip in ips],
                               "ports": [{"name": "http", "port": 8080, "protocol": "TCP"}]}]
        await client.update(rt, current)
        want = sorted(f"{ip}:8080" for ip in ips)
        for _ in range(1000):
            if programmed_endpoints(_iptables_nat(), cfg).get(f"{cluster_ip}:80/tcp") == want:
                break
            await asyncio.sleep(0.01)
        # alternate the two targets (four rounds each) so warm-up and drift hit both alike
        rounds_n = 4
        per_round = min(args.requests, (MAX_REQUESTS - 100) // 2) // rounds_n
        pods = [(ip, 8080) for ip in ips]
        await load(pods, 50, 4)
        await load([(cluster_ip, 80)], 50, 4)
        rounds: dict[str, list[dict[str, Any]]] = {"pod": [], "service": []}
        for _ in range(rounds_n):
            rounds["pod"].append(await load(pods, per_round, args.concurrency))
            rounds["service"].append(await load([(cluster_ip, 80)], per_round, args.concurrency))
        pod, via_service = _merge(rounds["pod"]), _merge(rounds["service"])
    return {"programming_latency_back_to_back": percentiles(back_to_back),
            "programming_latency_spaced_0.3s": percentiles(spaced),
            "pod_ip": pod, "cluster_ip": via_service,
            "cluster_ip_vs_pod_ip_rps_ratio": round(via_service["rps"] / pod["rps"], 3) if pod["rps"] else None}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--changes", type=int, default=30, help="Endpoints updates per latency series")
    parser.add_argument("--requests", type=int, default=2000, help="requests per throughput target (max 2500)")
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--backends", type=int, default=3)
    args = parser.parse_args()

    engine = docker.from_env()
    tag = os.urandom(3).hex()
    labels = {"minik8s.bench": f"proxy-{tag}"}
    name = f"mk8s-pb-{tag}"
    prefix = "KB" + tag[:5]
    third = _free_slice()
    cidr = f"10.96.{third}.0/24"
    cfg = ProxyConfig(chain_prefix=prefix, service_cidr=cidr).validate()
    proxy_args = ["--chain-prefix", prefix, "--service-cluster-ip-range", cidr, "--cluster-cidr", "10.244.0.0/16"]
    subnet, gateway = _free_subnet(engine)
    net = engine.networks.create(name, driver="bridge", labels=labels, options={"com.docker.network.bridge.name": name},
                                 ipam=IPAMConfig(pool_configs=[IPAMPool(subnet=subnet, gateway=gateway)]))
    containers: list[Any] = []
    proc: subprocess.Popen[bytes] | None = None
    try:
        for i in range(args.backends):
            script = f"mkdir -p /www && echo b{i} > /www/index.html && exec httpd -f -p 8080 -h /www"
            containers.append(engine.containers.run(IMAGE, ["sh", "-c", script], name=f"{name}-b{i}", detach=True,
                                                    network=name, labels=labels))
        ips = []
        for c in containers:
            c.reload()
            ips.append(c.attrs["NetworkSettings"]["Networks"][name]["IPAddress"])
        with control_plane() as (server, _), tempfile.TemporaryDirectory(prefix="minik8s-bench-proxy-") as tmp:
            kubeconfig = Path(tmp) / "kubeconfig"
            kubeconfig.write_text(render(server))
            log = open(Path(tmp) / "proxy.log", "wb")  # noqa: SIM115
            proc = subprocess.Popen([sys.executable, "-m", "minik8s", "proxy", "--kubeconfig", str(kubeconfig),
                                     *proxy_args], stdout=log, stderr=subprocess.STDOUT)
            result = asyncio.run(scenario(server, cfg, third, ips, args))
            proc.send_signal(signal.SIGTERM)
            proc.wait(10)
            log.close()
            syncs = [line for line in (Path(tmp) / "proxy.log").read_text().splitlines() if " synced mode=" in line]
            durations = sorted(float(line.rsplit("duration_ms=", 1)[1]) for line in syncs if "duration_ms=" in line)
            result["proxy_sync_duration_ms"] = {"p50": durations[len(durations) // 2] if durations else None,
                                                "max": durations[-1] if durations else None, "n": len(durations)}
    finally:
        if proc is not None and proc.poll() is None:
            proc.kill()
            proc.wait(5)
        subprocess.run([sys.executable, "-m", "minik8s", "proxy", "--cleanup", *proxy_args], capture_output=True)
        for c in containers:
            c.remove(force=True)
        net.remove()
    result["backends"] = args.backends
    result["targets"] = {"programming_p99<=1s": result["programming_latency_spaced_0.3s"].get("p99_ms", 1e9) <= 1000
                         and result["programming_latency_back_to_back"].get("p99_ms", 1e9) <= 1000}
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
