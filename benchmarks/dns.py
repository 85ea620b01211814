"""Cluster DNS figures: query latency/throughput and how fast a new Service becomes resolvable.

Starts its own etcd + apiserver (temp dir) with ``--services`` Services, one ``minik8s dns``
process (``--no-register``) on 127.0.0.1, and, as the baseline measured in the same run,
dnslib's own fixed-answer server (``python -m dnslib.fixedresolver``: the same packet
library, no lookups at all).  Measures:

* UDP queries/s and latency of a bounded asyncio load generator (``--concurrency`` workers,
  ``--queries`` per server, at most 20,000) for ``<svc>.bench.svc.cluster.local`` A records
  (the baseline answers every name with one fixed A record);
* propagation: a Service created through the API → its name answered by the server
  (polled every 5 ms), ``--creates`` times.

Traffic goes only to 127.0.0.1.  Everything stops at the end.  Prints one JSON document.
Targets: cluster DNS >= 0.5x the baseline's queries/s; propagation p99 <= 1 s.

    python -m benchmarks.dns [--services 200] [--queries 3000] [--concurrency 8] [--creates 20]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from dnslib import RCODE, DNSRecord

from benchmarks.common import control_plane, percentiles
from minik8s.client.kubeconfig import ClientConfig, render
from minik8s.client.rest import Client
from minik8s.cluster.processes import free_port

NAMESPACE = "bench"


class _Client(asyncio.DatagramProtocol):
    """One UDP socket; replies matched to waiting queries by message id."""

    def __init__(self) -> None:
        self.waiting: dict[int, asyncio.Future[bytes]] = {}

    def datagram_received(self, data: bytes, addr: tuple[str, int]) -> None:
        fut = self.waiting.pop(int.from_bytes(data[:2], "big"), None)
        if fut is not None and not fut.done():
            fut.set_result(data)


async def load(port: int, names: list[str], queries: int, concurrency: int) -> dict[str, Any]:
    """``queries`` A queries to 127.0.0.1:``port`` from ``concurrency`` workers; latency and rate."""
    loop = asyncio.get_running_loop()
    transport, proto = await loop.create_datagram_endpoint(_Client, remote_addr=("127.0.0.1", port))
    samples: list[float] = []
    failures = 0
    counter = iter(range(queries))

    async def worker() -> None:
        nonlocal failures
        for i in counter:
            packet = DNSRecord.question(names[i % len(names)])
            qid = i % 65536
            packet.header.id = qid
            fut: asyncio.Future[bytes] = loop.create_future()
            proto.waiting[qid] = fut
            t0 = time.perf_counter()
            transport.sendto(packet.pack())
            try:
                reply = DNSRecord.parse(await asyncio.wait_for(fut, 2))
            except TimeoutError:
                failures += 1
                proto.waiting.pop(qid, None)
                continue
            samples.append(time.perf_counter() - t0)
            if reply.header.rcode != RCODE.NOERROR or not reply.rr:
                failures += 1

    t0 = time.perf_counter()
    await asyncio.wait_for(asyncio.gather(*(worker() for _ in range(concurrency))), 120)
    elapsed = time.perf_counter() - t0
    transport.close()
    return {"queries_per_s": round(len(samples) / elapsed, 1), "failures": failures, **percentiles(samples)}


def start(argv: list[str], log: Path) -> subprocess.Popen[bytes]:
    out = open(log, "wb")  # noqa: SIM115 - owned by the child
    return subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT)


async def wait_answering(port: int, name: str, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            raw = await asyncio.to_thread(DNSRecord.question(name).send, "127.0.0.1", port, False, 0.5)
            if DNSRecord.parse(raw).rr:
                return
        except OSError:
            pass
        if time.monotonic() > deadline:
            raise TimeoutError(f"{name} not answered on port {port}")
        await asyncio.sleep(0.05)


async def run(args: argparse.Namespace) -> dict[str, Any]:
    queries = min(args.queries, 20000)
    with control_plane() as (server, _etcd), tempfile.TemporaryDirectory(prefix="minik8s-bench-dns-") as tmp:
        d = Path(tmp)
        async with Client(ClientConfig(server=server)) as client:
            svc_rt = client.kind("v1", "Service")
            await client.create(client.kind("v1", "Namespace"), {"metadata": {"name": NAMESPACE}})
            for i in range(args.services):
                await client.create(svc_rt, {"metadata": {"name": f"s{i}"}, "spec": {"ports": [{"port": 80}]}},
                                    NAMESPACE)
            (d / "kubeconfig").write_text(render(server))
            dns_port, base_port = free_port(), free_port()
            procs = [start([sys.executable, "-m", "minik8s", "dns", "--kubeconfig", str(d / "kubeconfig"),
                            "--port", str(dns_port), "--no-register"], d / "dns.log"),
                     start([sys.executable, "-m", "dnslib.fixedresolver", "--address", "127.0.0.1", "--port",
                            str(base_port), "--response", ". 60 IN A 10.96.0.1"], d / "baseline.log")]
            try:
                names = [f"s{i}.{NAMESPACE}.svc.cluster.local" for i in range(args.services)]
                await wait_answering(dns_port, names[0])
                await wait_answering(base_port, names[0])
                cluster = await load(dns_port, names, queries, args.concurrency)
                baseline = await load(base_port, names, queries, args.concurrency)
                propagation: list[float] = []
                for i in range(args.creates):
                    t0 = time.perf_counter()
                    await client.create(svc_rt, {"metadata": {"name": f"new{i}"},
                                                 "spec": {"ports": [{"port": 80}]}}, NAMESPACE)
                    name = f"new{i}.{NAMESPACE}.svc.cluster.local"
                    while True:
                        raw = await asyncio.to_thread(DNSRecord.question(name).send, "127.0.0.1", dns_port, False, 1)
                        if DNSRecord.parse(raw).rr:
                            break
                        if time.perf_counter() - t0 > 10:
                            raise TimeoutError(name)
                        await asyncio.sleep(0.005)
                    propagation.append(time.perf_counter() - t0)
            finally:
                for p in procs:
                    p.terminate()
                    p.wait(10)
    ratio = cluster["queries_per_s"] / baseline["queries_per_s"] if baseline["queries_per_s"] else 0.0
    prop = percentiles(propagation)
    return {"benchmark": "dns", "services": args.services, "concurrency": args.concurrency,
            "cluster_dns_udp": cluster, "baseline_fixed_resolver_udp": baseline,
            "throughput_vs_baseline": round(ratio, 2), "service_to_answer": prop,
            "targets_met": ratio >= 0.5 and prop.get("p99_ms", 1e9) <= 1000}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--services", type=int, default=200)
    parser.add_argument("--queries", type=int, default=3000)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--creates", type=int, default=20)
    args = parser.parse_args()
    print(json.dumps(asyncio.run(run(args)), indent=2))


if __name__ == "__main__":
    main()
