"""The resource metrics API (``metrics.k8s.io/v1beta1``), served by the apiserver itself.

In Kubernetes this is metrics-server behind the aggregation layer; here a background
:class:`MetricsScraper` in the apiserver does its job and :class:`MetricsAPI` serves the
result.  Nothing is stored in etcd.

Scraping: every ``resolution`` seconds (``minik8s apiserver --metrics-resolution``, 15 s by
default) the scraper reads ``GET /stats/summary`` (see :mod:`minik8s.kubelet.stats`) from the
kubelet at ``{InternalIP}:{daemonEndpoints.kubeletEndpoint.Port}`` — over https with the
apiserver's kubelet client certificate when ``--kubelet-*`` flags are set (see
:mod:`minik8s.apiserver.kubelet_client`) — of every *live* node — Ready
condition True and a node Lease renewed within the node-monitor grace period (40 s, or the
Lease's duration if longer; without a Lease, a Ready heartbeat that recent), so Node
objects without a running kubelet are never contacted — all nodes at once, each with a
10 s timeout.  An unreachable kubelet is logged and skipped; the others still count.  Only
the latest sample per pod (by uid) and per node is kept: a node's successful scrape
replaces all samples of its pods, and a sample not refreshed for three resolutions is
dropped, so the pods of a dead node lose their metrics.  A pod is only reported when every
running container has both a CPU rate (``usageNanoCores``) and a working set.

Serving (verbs get and list, like metrics-server):

- ``GET /apis/metrics.k8s.io/v1beta1/[namespaces/{ns}/]pods[/{name}]`` → PodMetrics(List);
  the pods are read from storage, so ``labelSelector``/``fieldSelector`` act on the pods'
  labels and fields, metadata carries the pod's labels, and deleted pods never show.
- ``GET /apis/metrics.k8s.io/v1beta1/nodes[/{name}]`` → NodeMetrics(List), ``labelSelector`` on
  the Nodes' labels.
- A pod or node without a sample answers 404 NotFound (``podmetrics.metrics.k8s.io
  "ns/name" not found``); other verbs 405; ``watch`` 405.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx
from fastapi import FastAPI, Request
from fastapi.responses import Response

from minik8s.api import errors
from minik8s.api.base import Obj, now_rfc3339, parse_time
from minik8s.api.durations import format_duration
from minik8s.api.metrics import API_VERSION, GROUP, VERSION
from minik8s.api.quantity import format_memory, format_nanocores
from minik8s.apiserver import negotiation
from minik8s.apiserver.kubelet_client import KubeletClient, kubelet_address
from minik8s.apiserver.resources import ListOptions, ResourceAPI

log = logging.getLogger("apiserver")

#: Default seconds between two scrapes (metrics-server's ``--metric-resolution``).
DEFAULT_RESOLUTION = 15.0
#: Seconds a node may go without a heartbeat and still be scraped (``--node-monitor-grace-period``).
NODE_GRACE = 40.0
#: Seconds one kubelet may take to answer.
KUBELET_TIMEOUT = 10.0
#: The kubelet's rate window when it had no earlier sample of a container (``stats.SAMPLE_GAP``).
FIRST_WINDOW = 1.0
#: Samples older than this many resolutions are dropped.
STALE_RESOLUTIONS = 3
NODE_LEASE_NAMESPACE = "kube-node-lease"


@dataclass
class ContainerSample:
    """One container's usage: CPU in nanocores (a rate), memory working set in bytes."""

    name: str
    cpu_nanocores: int
    memory_bytes: int


@dataclass
class PodSample:
    """The latest usage of one pod, as scraped from its node's kubelet."""

    uid: str
    namespace: str
    name: str
    node: str
    timestamp: str  # RFC 3339, the kubelet's sample time
    window: float  # seconds the CPU rate is averaged over
    containers: list[ContainerSample]
    scraped: float = 0.0  # the scraper clock (monotonic seconds) at the scrape


@dataclass
class NodeSample:
    """The latest usage of a whole node (CPU nanocores, memory working set bytes)."""

    name: str
    timestamp: str
    window: float
    cpu_nanocores: int
    memory_bytes: int
    scraped: float = 0.0


def _age(stamp: str | None, now: dt.datetime) -> float | None:
    try:
        when = parse_time(stamp)
    except ValueError:
        return None
    return (now - when).total_seconds() if when else None


def scrape_targets(nodes: list[Obj], leases: list[Obj], now: dt.datetime,
                   grace: float = NODE_GRACE) -> list[tuple[str, str]]:
    """``(node name, kubelet host:port)`` of the nodes worth scraping.

    A node qualifies when its Ready condition is True and its kubelet is alive: its Lease in
    ``kube-node-lease`` was renewed within ``max(grace, leaseDurationSeconds)`` seconds of
    ``now`` (without a Lease: the Ready condition's ``lastHeartbeatTime`` within ``grace``),
    and it has an InternalIP.  Node objects nobody runs a kubelet for are never contacted.
    """
    renewed = {}
    for lease in leases:
        spec = lease.get("spec") or {}
        renewed[(lease.get("metadata") or {}).get("name")] = (spec.get("renewTime"),
                                                               spec.get("leaseDurationSeconds") or 0)
    targets = []
    for node in nodes:
        name = (node.get("metadata") or {}).get("name") or ""
        ready = next((c for c in (node.get("status") or {}).get("conditions") or [] if c.get("type") == "Ready"), None)
        if ready is None or ready.get("status") != "True":
            continue
        if name in renewed:
            stamp, duration = renewed[name]
            limit = max(grace, float(duration))
        else:
            stamp, limit = ready.get("lastHeartbeatTime"), grace
        age = _age(stamp, now)
        address = kubelet_address(node)
        if age is not None and age <= limit and address:
            targets.append((name, address))
    return targets


def samples_from_summary(summary: Obj, node: str, window: float,
                         scraped: float = 0.0) -> tuple[NodeSample | None, list[PodSample]]:
    """The node and pod samples in one Summary API document (``{"node": ..., "pods": [...]}``).

    Pods missing a CPU rate or a working set for any container are left out (their next
    scrape will have them), as metrics-server does; so is the node when its own numbers
    are incomplete.
    """
    node_stats = summary.get("node") or {}
    node_cpu = (node_stats.get("cpu") or {}).get("usageNanoCores")
    node_mem = (node_stats.get("memory") or {}).get("workingSetBytes")
    node_sample = None
    if node_cpu is not None and node_mem is not None:
        node_sample = NodeSample(node, (node_stats.get("cpu") or {}).get("time") or now_rfc3339(), window,
                                 int(node_cpu), int(node_mem), scraped)
    pods = []
    for entry in summary.get("pods") or []:
        ref = entry.get("podRef") or {}
        containers: list[ContainerSample] = []
        stamp = (entry.get("cpu") or {}).get("time")
        for c in entry.get("containers") or []:
            cpu, mem = (c.get("cpu") or {}).get("usageNanoCores"), (c.get("memory") or {}).get("workingSetBytes")
            if cpu is None or mem is None:
                containers = []
                break
            stamp = stamp or (c.get("cpu") or {}).get("time")
            containers.append(ContainerSample(str(c.get("name")), int(cpu), int(mem)))
        if containers and ref.get("uid"):
            pods.append(PodSample(str(ref["uid"]), str(ref.get("namespace")), str(ref.get("name")), node,
                                  stamp or now_rfc3339(), window, containers, scraped))
    return node_sample, pods


@dataclass
class MetricsScraper:
    """Keeps the latest pod and node samples, refreshed from the kubelets every ``resolution`` s.

    ``await run()`` loops until cancelled; :meth:`scrape_once` is one round.  ``kubelet`` is
    how kubelets are reached (None: a plain-HTTP one of its own, for the duration of
    :meth:`run`).  ``clock`` is the monotonic clock the staleness rule uses (replaceable in tests).
    """

    api: ResourceAPI
    resolution: float = DEFAULT_RESOLUTION
    kubelet: KubeletClient | None = None
    clock: Callable[[], float] = time.monotonic
    pods: dict[str, PodSample] = field(default_factory=dict)
    nodes: dict[str, NodeSample] = field(default_factory=dict)
    _last_ok: dict[str, float] = field(default_factory=dict)
    _failing: set[str] = field(default_factory=set)

    async def run(self) -> None:
        """Scrape every ``resolution`` seconds until cancelled (errors never end the loop)."""
        owns_kubelet = self.kubelet is None
        if self.kubelet is None:
            self.kubelet = KubeletClient()
        log.info("apiserver metrics scraper resolution=%s", format_duration(self.resolution))
        try:
            while True:
                started = self.clock()
                try:
                    await self.scrape_once()
                except asyncio.CancelledError:
                    raise
                except Exception:  # noqa: BLE001 - the next round tries again
                    log.exception("apiserver metrics scrape failed")
                await asyncio.sleep(max(self.resolution - (self.clock() - started), 0.05))
        finally:
            if owns_kubelet:
                await self.kubelet.aclose()
                self.kubelet = None

    async def _targets(self) -> list[tuple[str, str]]:
        node_rt = self.api.registry.by_kind("v1", "Node")
        lease_rt = self.api.registry.by_kind("coordination.k8s.io/v1", "Lease")
        assert node_rt is not None and lease_rt is not None
        nodes = (await self.api.list(node_rt, None, ListOptions()))["items"]
        leases = (await self.api.list(lease_rt, NODE_LEASE_NAMESPACE, ListOptions()))["items"]
        return scrape_targets(nodes, leases, dt.datetime.now(dt.UTC))

    async def scrape_once(self) -> None:
        """One round: scrape every live node concurrently, then drop stale samples."""
        try:
            targets = await self._targets()
        except errors.APIError as exc:  # etcd away: keep what we have
            log.warning("apiserver metrics cannot list nodes: %s", exc.message)
            targets = []
        await asyncio.gather(*(self._scrape_node(name, address) for name, address in targets))
        cutoff = self.clock() - STALE_RESOLUTIONS * self.resolution
        for uid in [u for u, s in self.pods.items() if s.scraped < cutoff]:
            del self.pods[uid]
        for name in [n for n, s in self.nodes.items() if s.scraped < cutoff]:
            del self.nodes[name]

    async def _scrape_node(self, name: str, address: str) -> None:
        assert self.kubelet is not None
        try:
            resp = await self.kubelet.http.get(self.kubelet.url(address, "/stats/summary"), timeout=KUBELET_TIMEOUT)
            resp.raise_for_status()
            summary = resp.json()
        except (httpx.HTTPError, ValueError) as exc:
            level = logging.DEBUG if name in self._failing else logging.WARNING
            log.log(level, "apiserver metrics node=%s kubelet=%s unreachable: %s", name, address,
                    str(exc) or type(exc).__name__)
            self._failing.add(name)
            return
        if name in self._failing:
            log.info("apiserver metrics node=%s kubelet=%s reachable again", name, address)
            self._failing.discard(name)
        now = self.clock()
        last = self._last_ok.get(name)
        window = now - last if last is not None and now - last < 300 else FIRST_WINDOW
        self._last_ok[name] = now
        node_sample, pod_samples = samples_from_summary(summary, name, max(window, FIRST_WINDOW), now)
        for uid in [u for u, s in self.pods.items() if s.node == name]:
            del self.pods[uid]
        self.pods.update({s.uid: s for s in pod_samples})
        if node_sample is not None:
            self.nodes[name] = node_sample


def pod_metrics(pod: Obj, sample: PodSample) -> Obj:
    """The PodMetrics object of ``pod`` from its sample."""
    meta = pod.get("metadata") or {}
    return {"kind": "PodMetrics", "apiVersion": API_VERSION,
            "metadata": {"name": meta.get("name"), "namespace": meta.get("namespace"),
                         "creationTimestamp": now_rfc3339(), "labels": meta.get("labels") or {}},
            "timestamp": sample.timestamp, "window": format_duration(sample.window),
            "containers": [{"name": c.name, "usage": {"cpu": format_nanocores(c.cpu_nanocores),
                                                      "memory": format_memory(c.memory_bytes)}}
                           for c in sample.containers]}


def node_metrics(node: Obj, sample: NodeSample) -> Obj:
    """The NodeMetrics object of ``node`` from its sample."""
    meta = node.get("metadata") or {}
    return {"kind": "NodeMetrics", "apiVersion": API_VERSION,
            "metadata": {"name": meta.get("name"), "creationTimestamp": now_rfc3339(),
                         "labels": meta.get("labels") or {}},
            "timestamp": sample.timestamp, "window": format_duration(sample.window),
            "usage": {"cpu": format_nanocores(sample.cpu_nanocores), "memory": format_memory(sample.memory_bytes)}}


class MetricsAPI:
    """Serves ``metrics.k8s.io/v1beta1`` from a :class:`MetricsScraper` (see the module docstring)."""

    PREFIX = f"/apis/{GROUP}/{VERSION}"

    def __init__(self, api: ResourceAPI, scraper: MetricsScraper) -> None:
        self.api = api
        self.scraper = scraper

    def _rt(self, kind: str) -> Any:
        return self.api.registry.by_kind("v1", kind)

    def _pod_sample(self, pod: Obj) -> PodSample | None:
        meta = pod.get("metadata") or {}
        sample = self.scraper.pods.get(str(meta.get("uid")))
        if sample is None or (sample.namespace, sample.name) != (meta.get("namespace"), meta.get("name")):
            return None
        return sample

    async def list_pods(self, namespace: str | None, opts: ListOptions) -> Obj:
        """PodMetricsList of the pods ``opts`` selects in ``namespace`` (None: all) that have a sample."""
        pods = (await self.api.list(self._rt("Pod"), namespace, opts))["items"]
        items = []
        for pod in pods:
            sample = self._pod_sample(pod)
            if sample is not None:
                items.append(pod_metrics(pod, sample))
        return {"kind": "PodMetricsList", "apiVersion": API_VERSION, "metadata": {}, "items": items}

    async def get_pod(self, namespace: str, name: str) -> Obj:
        """PodMetrics of one pod; NotFound when the pod or its sample is missing."""
        not_found = errors.NotFound(f'podmetrics.{GROUP} "{namespace}/{name}" not found',
                                    {"name": f"{namespace}/{name}", "group": GROUP, "kind": "podmetrics"})
        try:
            pod = await self.api.get(self._rt("Pod"), namespace, name)
        except errors.NotFound:
            raise not_found from None
        sample = self._pod_sample(pod)
        if sample is None:
            raise not_found
        return pod_metrics(pod, sample)

    async def list_nodes(self, opts: ListOptions) -> Obj:
        """NodeMetricsList of the Nodes ``opts`` selects that have a sample."""
        nodes = (await self.api.list(self._rt("Node"), None, opts))["items"]
        items = [node_metrics(n, self.scraper.nodes[n["metadata"]["name"]]) for n in nodes
                 if n["metadata"]["name"] in self.scraper.nodes]
        return {"kind": "NodeMetricsList", "apiVersion": API_VERSION, "metadata": {}, "items": items}

    async def get_node(self, name: str) -> Obj:
        """NodeMetrics of one Node; NotFound when the Node or its sample is missing."""
        not_found = errors.NotFound(f'nodemetrics.{GROUP} "{name}" not found',
                                    {"name": name, "group": GROUP, "kind": "nodemetrics"})
        try:
            node = await self.api.get(self._rt("Node"), None, name)
        except errors.NotFound:
            raise not_found from None
        sample = self.scraper.nodes.get(name)
        if sample is None:
            raise not_found
        return node_metrics(node, sample)

    async def handle(self, request: Request, rest: str) -> Obj:
        """Dispatch one request under :attr:`PREFIX` (``rest`` is the path after it)."""
        parts = [p for p in rest.split("/") if p]
        namespace = None
        if len(parts) >= 3 and parts[0] == "namespaces" and parts[2] == "pods":
            namespace, parts = parts[1], parts[2:]
        if not parts or parts[0] not in ("pods", "nodes") or len(parts) > 2 or \
                (namespace is not None and parts[0] != "pods"):
            raise errors.NotFound("the server could not find the requested resource")
        params = request.query_params
        if request.method != "GET" or (params.get("watch") or "").lower() in ("1", "true"):
            raise errors.MethodNotAllowed(f"the server does not allow this method on the requested resource "
                                          f"({parts[0]}.{GROUP} supports get and list)")
        opts = ListOptions(label_selector=params.get("labelSelector", ""),
                           field_selector=params.get("fieldSelector", ""))
        if parts[0] == "nodes":
            return await (self.get_node(parts[1]) if len(parts) == 2 else self.list_nodes(opts))
        if len(parts) == 2:
            if namespace is None:
                raise errors.NotFound("the server could not find the requested resource")
            return await self.get_pod(namespace, parts[1])
        return await self.list_pods(namespace, opts)

    def register(self, app: FastAPI) -> None:
        """Add the routes (before the generic ``/apis/{group}/{version}/...`` route)."""

        @app.api_route(self.PREFIX + "/{rest:path}", methods=["GET", "POST", "PUT", "PATCH", "DELETE"],
                       include_in_schema=False)
        async def metrics_route(request: Request, rest: str) -> Response:
            accept = request.headers.get("accept")
            obj = await self.handle(request, rest)
            kind = str(obj.get("kind") or "")
            if kind.endswith("List"):
                out = negotiation.negotiate(accept, negotiation.LIST_TARGETS)
                data = negotiation.convert_list(obj, kind[:-4], out, request.query_params)
            else:
                out = negotiation.negotiate(accept, negotiation.OBJECT_TARGETS)
                data = negotiation.convert_object(obj, kind, out, request.query_params)
            return Response(negotiation.render(data, out), media_type=out.media_type)


@contextlib.asynccontextmanager
async def running(scraper: MetricsScraper | None) -> Any:
    """Run ``scraper`` in the background for the duration of the block (no-op for None)."""
    if scraper is None:
        yield
        return
    task = asyncio.get_running_loop().create_task(scraper.run(), name="metrics-scraper")
    try:
        yield
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
