"""The Function autoscaler: scales each Function's Deployment on in-flight requests (Knative's KPA).

Metric: the gateway counts the requests in flight per Function and publishes, on
``GET <gateway>/metrics``, for each ``namespace/name`` the number in flight now, the
*concurrency-seconds* (the integral of in-flight requests over time, a counter), the number
of requests and the unix time of the last one, plus the gateway's ``startTime`` and ``time``::

    {"startTime": 1767225600.0, "time": 1767225660.5,
     "functions": {"default/hello": {"inFlight": 3, "concurrencySeconds": 41.2, "requests": 900,
                                     "lastRequestTime": 1767225660.4}}}

A scrape loop reads it every tick (2 s); the average concurrency of a Function over the
interval is the difference of its concurrency-seconds divided by the time between the two
scrapes (a restarted gateway — another ``startTime`` — gives the current in-flight number
instead).  A Function missing from a successful scrape had no traffic (0).  When the gateway
cannot be reached, no sample is added and the deciders keep the current scale.

Each Function is synced every tick: its :class:`~minik8s.controllers.kpa.Decider` gets the
sample and decides; a different count is written to the Deployment's ``spec.replicas`` (a merge
patch with the Deployment's resourceVersion, so a concurrent change — the gateway starting the
Function from zero — wins and is reconsidered next tick) together with the annotation
:data:`~minik8s.api.serverless.LAST_SCALE_ANNOTATION`.  That annotation, whoever wrote it,
is the "last scale" the decider counts idle time from.  ``PerInvocation`` Functions are not
scaled.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import httpx

from minik8s.api import errors
from minik8s.api import serverless as s
from minik8s.api.base import Obj, object_key
from minik8s.api.serverless import DEFAULT_GATEWAY_URL, FUNCTION_INDEX, by_function
from minik8s.client.events import EventRecorder
from minik8s.client.factory import SharedInformerFactory
from minik8s.client.rest import Client
from minik8s.controllers.base import Controller
from minik8s.controllers.kpa import STABLE_WINDOW_SECONDS, TICK_SECONDS, Decider, ScalingParams
from minik8s.controllers.ownerrefs import meta_of
from minik8s.controllers.podutil import is_pod_ready


@dataclass
class Scrape:
    """One successful read of the gateway's metrics."""

    start_time: float
    time: float
    functions: dict[str, Obj]


@dataclass
class MetricsScraper:
    """Reads the gateway's ``/metrics`` and turns consecutive scrapes into concurrency samples."""

    url: str
    token: str = ""
    generation: int = 0
    ok: bool = False
    last: Scrape | None = None
    samples: dict[str, tuple[float, float | None]] = field(default_factory=dict)

    async def scrape(self, http: httpx.AsyncClient) -> None:
        try:
            headers = {"Authorization": f"Bearer {self.token}"} if self.token else None
            resp = await http.get(f"{self.url}/metrics", headers=headers, timeout=2.0)
            data = resp.json()
            scrape = Scrape(float(data["startTime"]), float(data["time"]), dict(data.get("functions") or {}))
        except (httpx.HTTPError, ValueError, KeyError, TypeError):
            self.ok = False
            return
        self.ingest(scrape)

    def ingest(self, scrape: Scrape) -> None:
        """Compute the samples of ``scrape`` against the previous one."""
        prev = self.last
        comparable = prev is not None and prev.start_time == scrape.start_time and scrape.time > prev.time
        samples: dict[str, tuple[float, float | None]] = {}
        for key, m in scrape.functions.items():
            in_flight = float(m.get("inFlight") or 0)
            last_request = m.get("lastRequestTime")
            value = in_flight
            if comparable and prev is not None:
                before = float((prev.functions.get(key) or {}).get("concurrencySeconds") or 0)
                delta = float(m.get("concurrencySeconds") or 0) - before
                if delta >= 0:
                    value = delta / (scrape.time - prev.time)
            samples[key] = (value, float(last_request) if last_request else None)
        self.samples = samples
        self.last = scrape
        self.generation += 1
        self.ok = True

    def sample(self, key: str) -> tuple[float, float | None] | None:
        """``(average in-flight requests, last request time)`` of the latest scrape; None when the
        gateway could not be read."""
        if not self.ok:
            return None
        return self.samples.get(key, (0.0, None))


def scaling_params(fn: Obj, stable_window: float = STABLE_WINDOW_SECONDS) -> ScalingParams:
    """The decider's parameters for ``fn`` (``spec.scaling`` with the autoscaler's stable window;
    the panic window is a tenth of it, as in Knative)."""
    scaling = (fn.get("spec") or {}).get("scaling") or {}
    return ScalingParams(
        stable_window=stable_window, panic_window=stable_window / 10,
        target_concurrency=float(scaling.get("targetConcurrency") or s.DEFAULT_TARGET_CONCURRENCY),
        min_scale=int(scaling.get("minScale") or 0),
        max_scale=int(scaling.get("maxScale") or s.DEFAULT_MAX_SCALE),
        scale_to_zero_after=float(scaling.get("scaleToZeroAfterSeconds") or s.DEFAULT_SCALE_TO_ZERO_AFTER_SECONDS))


class FunctionAutoscaler(Controller):
    """Ticks every Function every ``tick`` seconds: scrape sample → decider → Deployment replicas.
    ``stable_window`` (seconds, default 60) is the KPA's stable window; the panic window is a tenth.
    ``gateway_token`` (when not empty) is sent as ``Authorization: Bearer`` with each scrape."""

    name = "function-autoscaler"

    def __init__(self, client: Client, factory: SharedInformerFactory, gateway_url: str = DEFAULT_GATEWAY_URL,
                 recorder: EventRecorder | None = None, tick: float = TICK_SECONDS,
                 stable_window: float = STABLE_WINDOW_SECONDS, clock: Callable[[], float] = time.time,
                 gateway_token: str = "") -> None:
        super().__init__(client, factory, recorder)
        self.tick = tick
        self.stable_window = stable_window
        self.clock = clock
        self.scraper = MetricsScraper(gateway_url.rstrip("/"), gateway_token)
        self.fn_rt = client.kind(s.API_VERSION, "Function")
        self.deploy_rt = client.kind("apps/v1", "Deployment")
        index = {FUNCTION_INDEX: by_function}
        self.functions = factory.informer(self.fn_rt)
        self.deployments = factory.informer(self.deploy_rt, index)
        self.pods = factory.informer(client.kind("v1", "Pod"), index)
        self.functions.add_handler(lambda o: self.enqueue(object_key(o)), None, lambda o: self.enqueue(object_key(o)))
        self.deciders: dict[str, Decider] = {}
        self.observed: dict[str, int] = {}

    async def run(self, workers: int = 1) -> None:
        loop = asyncio.get_running_loop()
        scraping = loop.create_task(self._scrape_loop())
        try:
            await super().run(workers)
        finally:
            scraping.cancel()
            await asyncio.gather(scraping, return_exceptions=True)

    async def _scrape_loop(self) -> None:
        async with httpx.AsyncClient() as http:
            while True:
                await self.scraper.scrape(http)
                await asyncio.sleep(self.tick)

    async def sync(self, key: str) -> None:
        fn = self.functions.get(key)
        if fn is None or meta_of(fn).get("deletionTimestamp"):
            self.deciders.pop(key, None)
            self.observed.pop(key, None)
            return
        self.enqueue_after(key, self.tick)
        if (fn.get("spec") or {}).get("mode") == "PerInvocation":
            return
        ns, name = key.split("/", 1)
        deployment = self.deployments.get(f"{ns}/{s.workload_name(name)}")
        if deployment is None:
            return
        params = scaling_params(fn, self.stable_window)
        decider = self.deciders.get(key)
        if decider is None:
            decider = self.deciders[key] = Decider(params, self.clock)
        decider.params = params
        annotations = meta_of(deployment).get("annotations") or {}
        try:
            decider.note_scale(float(annotations[s.LAST_SCALE_ANNOTATION]))
        except (KeyError, ValueError):
            pass
        sample = self.scraper.sample(key)
        if sample is not None and self.observed.get(key) != self.scraper.generation:
            self.observed[key] = self.scraper.generation
            decider.observe(*sample)
        current = int((deployment.get("spec") or {}).get("replicas") or 0)
        ready = sum(1 for p in self.pods.by_index(FUNCTION_INDEX, key)
                    if is_pod_ready(p) and not meta_of(p).get("deletionTimestamp"))
        decision = decider.decide(current, ready)
        if decision.desired == current:
            return
        patch = {"metadata": {"resourceVersion": meta_of(deployment).get("resourceVersion"),
                              "annotations": {s.LAST_SCALE_ANNOTATION: f"{self.clock():.3f}"}},
                 "spec": {"replicas": decision.desired}}
        try:
            await self.client.patch(self.deploy_rt, s.workload_name(name), patch, ns)
        except (errors.Conflict, errors.NotFound):
            return  # changed meanwhile: decided again next tick
        self.log.info("function %s: scaled %d -> %d (%s)", key, current, decision.desired, decision.reason)
        self.event(fn, "Normal", "Scaled", f"{current} -> {decision.desired} instances ({decision.reason})")
