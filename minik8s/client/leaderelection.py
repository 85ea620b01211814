"""Leader election on a ``coordination.k8s.io/v1`` Lease, as client-go's ``leaderelection``.

Several copies of a component (the scheduler, the controller-manager) run on several hosts;
one of them -- the *leader* -- does the work, the others wait, ready to take over.  The
leader is whoever holds a Lease object (``kube-system/kube-scheduler``,
``kube-system/kube-controller-manager``):

* ``spec.holderIdentity`` -- the holder, ``<hostname>_<uuid>`` (unique per process);
* ``spec.leaseDurationSeconds`` -- how long others wait after the last renewal they saw
  before they may take the lease (``--leader-elect-lease-duration``, 15 s);
* ``spec.acquireTime`` / ``spec.renewTime`` -- MicroTime of the current holder's acquisition
  and last renewal; ``spec.leaseTransitions`` -- how many times the holder changed.

Every ``retry_period`` (2 s) each candidate reads the Lease.  A candidate that is not the holder
takes it when it is free (no holder) or expired: the record has not changed for
``lease_duration`` seconds *as measured by the candidate's own clock* since it first saw that
record (client-go's observedTime: holders' clocks need not agree).  The holder renews by
writing a new ``renewTime``.  Every write is an update on the Lease's ``resourceVersion``
(optimistic concurrency), so when two candidates race exactly one wins and the other gets a
409 and tries again next period.

A leader that cannot renew for ``renew_deadline`` (10 s, less than the lease duration) stops
leading *before* anyone else can take over: :meth:`LeaderElector.run` cancels the work it
started and raises :class:`LeadershipLost` (Kubernetes' components then exit; systemd or
``minik8s up``'s supervisor starts them again as candidates).  On a clean stop (the task is
cancelled) a leader releases the lease (client-go's ``ReleaseOnCancel``): holder cleared,
duration 1 s, so a follower takes over at its next retry instead of after a whole lease
duration.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import socket
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from minik8s.api import errors
from minik8s.api.base import Obj, now_rfc3339_micro
from minik8s.client.rest import Client

log = logging.getLogger("leaderelection")

#: client-go's defaults (kube-scheduler's and kube-controller-manager's ``--leader-elect-*`` flags), seconds.
DEFAULT_LEASE_DURATION = 15.0
DEFAULT_RENEW_DEADLINE = 10.0
DEFAULT_RETRY_PERIOD = 2.0
#: client-go's JitterFactor: waits between tries are ``retry_period * (1 + 1.2 * random())``.
JITTER_FACTOR = 1.2


class LeadershipLost(Exception):
    """The leader could not renew its lease within the renew deadline (client-go: "leaderelection lost")."""


def default_identity() -> str:
    """``<hostname>_<uuid>``: kube-scheduler's and kube-controller-manager's holder identity."""
    return f"{socket.gethostname()}_{uuid.uuid4()}"


@dataclass(frozen=True)
class LeaderElectionConfig:
    """Where the lease lives and the timings (seconds).

    Raises ValueError (from :meth:`validate`) unless ``lease_duration > renew_deadline >
    JITTER_FACTOR * retry_period > 0``, client-go's checks."""

    namespace: str = "kube-system"
    name: str = ""
    identity: str = ""
    lease_duration: float = DEFAULT_LEASE_DURATION
    renew_deadline: float = DEFAULT_RENEW_DEADLINE
    retry_period: float = DEFAULT_RETRY_PERIOD
    release_on_cancel: bool = True

    def validate(self) -> None:
        if not self.name:
            raise ValueError("leader election requires a lease name")
        if self.lease_duration <= self.renew_deadline:
            raise ValueError("leaseDuration must be greater than renewDeadline")
        if self.renew_deadline <= JITTER_FACTOR * self.retry_period:
            raise ValueError(f"renewDeadline must be greater than retryPeriod*JitterFactor ({JITTER_FACTOR})")
        if self.retry_period <= 0:
            raise ValueError("retryPeriod must be greater than zero")


def holder(lease: Obj | None) -> str:
    """The Lease's ``spec.holderIdentity`` ("" when free or missing)."""
    return str(((lease or {}).get("spec") or {}).get("holderIdentity") or "")


class LeaderElector:
    """One candidate for the lease of ``config``.

    ``await run(lead)``: campaign; once this candidate holds the lease, ``lead()`` (a coroutine
    function: the component's work) runs as a task while the lease is renewed every
    ``retry_period``.  ``run`` returns when ``lead()`` returns (the lease is released);
    raises :class:`LeadershipLost` when renewing failed for ``renew_deadline`` (``lead()`` is
    cancelled first); when ``run`` itself is cancelled, ``lead()`` is cancelled and the lease
    released (``release_on_cancel``).  API errors while campaigning are logged and retried.

    ``on_new_leader(identity)`` is called whenever the observed holder changes (client-go's
    OnNewLeader).  ``is_leader()`` says whether this candidate holds an unexpired lease.
    """

    def __init__(self, client: Client, config: LeaderElectionConfig,
                 on_new_leader: Callable[[str], None] | None = None) -> None:
        config.validate()
        self.client = client
        self.config = config
        self.identity = config.identity or default_identity()
        self.on_new_leader = on_new_leader
        self.rt = client.kind("coordination.k8s.io/v1", "Lease")
        self._observed: Obj | None = None      # the last lease read or written
        self._observed_spec: Obj | None = None
        self._observed_at = 0.0                # monotonic time the spec last changed
        self._reported_leader = ""
        self._leading = False

    # ------------------------------------------------------------------ state
    def is_leader(self) -> bool:
        return self._leading and holder(self._observed) == self.identity

    def leader(self) -> str:
        """The holder last observed ("" when none)."""
        return holder(self._observed)

    # ------------------------------------------------------------------ loop
    async def run(self, lead: Callable[[], Awaitable[Any]]) -> None:
        await self._acquire()
        self._leading = True
        log.info("successfully acquired lease %s/%s as %s", self.config.namespace, self.config.name, self.identity)
        work = asyncio.get_running_loop().create_task(self._call(lead), name=f"leading:{self.config.name}")
        renewing = asyncio.get_running_loop().create_task(self._renew_loop(), name=f"renew:{self.config.name}")
        try:
            done, _ = await asyncio.wait({work, renewing}, return_when=asyncio.FIRST_COMPLETED)
            if renewing in done:
                work.cancel()
                await asyncio.gather(work, return_exceptions=True)
                self._leading = False
                renewing.result()  # raises LeadershipLost
            else:
                renewing.cancel()
                await asyncio.gather(renewing, return_exceptions=True)
                await self._release()
                work.result()
        except asyncio.CancelledError:
            for task in (work, renewing):
                task.cancel()
            await asyncio.gather(work, renewing, return_exceptions=True)
            if self.config.release_on_cancel:
                await asyncio.shield(self._release())
            raise
        finally:
            self._leading = False

    @staticmethod
    async def _call(lead: Callable[[], Awaitable[Any]]) -> None:
        await lead()

    def _jittered(self) -> float:
        return self.config.retry_period * (1 + JITTER_FACTOR * random.random())

    async def _acquire(self) -> None:
        log.info("attempting to acquire leader lease %s/%s", self.config.namespace, self.config.name)
        while True:
            if await self._try(self.config.retry_period * 5):
                return
            await asyncio.sleep(self._jittered())

    async def _renew_loop(self) -> None:
        """Renew every ``retry_period``; raise LeadershipLost after ``renew_deadline`` without success."""
        while True:
            await asyncio.sleep(self.config.retry_period)
            deadline = time.monotonic() + self.config.renew_deadline
            while True:
                left = deadline - time.monotonic()
                if left <= 0:
                    log.error("failed to renew lease %s/%s within %.1fs: leaderelection lost",
                              self.config.namespace, self.config.name, self.config.renew_deadline)
                    raise LeadershipLost(f"lease {self.config.namespace}/{self.config.name} not renewed "
                                         f"within {self.config.renew_deadline:g}s")
                if await self._try(left):
                    break
                if holder(self._observed) not in ("", self.identity):
                    raise LeadershipLost(f"lease {self.config.namespace}/{self.config.name} is held by "
                                         f"{holder(self._observed)}")
                await asyncio.sleep(min(self.config.retry_period, max(deadline - time.monotonic(), 0)))

    async def _try(self, timeout: float) -> bool:
        """One tryAcquireOrRenew bounded by ``timeout`` seconds; False on any failure."""
        try:
            return await asyncio.wait_for(self._try_acquire_or_renew(), timeout)
        except TimeoutError:
            log.warning("lease %s/%s: no answer within %.1fs", self.config.namespace, self.config.name, timeout)
        except errors.Conflict:
            log.debug("lease %s/%s: conflict, someone else wrote it", self.config.namespace, self.config.name)
        except errors.APIError as exc:
            log.warning("error retrieving or updating lease %s/%s: %s", self.config.namespace, self.config.name,
                        exc)
        return False

    def _observe(self, lease: Obj) -> None:
        spec = lease.get("spec") or {}
        if spec != self._observed_spec:
            self._observed_spec = dict(spec)
            self._observed_at = time.monotonic()
        self._observed = lease
        current = holder(lease)
        if current and current != self._reported_leader:
            self._reported_leader = current
            if current != self.identity:
                log.info("new leader of %s/%s: %s", self.config.namespace, self.config.name, current)
            if self.on_new_leader is not None:
                self.on_new_leader(current)

    async def _try_acquire_or_renew(self) -> bool:
        now = now_rfc3339_micro()
        spec: Obj = {"holderIdentity": self.identity, "leaseDurationSeconds": max(1, round(self.config.lease_duration)),
                     "acquireTime": now, "renewTime": now, "leaseTransitions": 0}
        try:
            current: Obj = await self.client.get(self.rt, self.config.name, self.config.namespace)
        except errors.NotFound:
            body = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                    "metadata": {"name": self.config.name, "namespace": self.config.namespace}, "spec": spec}
            created: Obj = await self.client.create(self.rt, body, self.config.namespace)
            self._observe(created)
            return True
        self._observe(current)
        old = current.get("spec") or {}
        old_holder = holder(current)
        if old_holder and old_holder != self.identity:
            duration = float(old.get("leaseDurationSeconds") or self.config.lease_duration)
            if self._observed_at + duration > time.monotonic():
                return False  # held and not expired
        if old_holder == self.identity:
            spec["acquireTime"] = old.get("acquireTime") or now
            spec["leaseTransitions"] = int(old.get("leaseTransitions") or 0)
        else:
            spec["leaseTransitions"] = int(old.get("leaseTransitions") or 0) + 1
        current["spec"] = spec
        updated: Obj = await self.client.update(self.rt, current)  # resourceVersion: optimistic concurrency
        self._observe(updated)
        return True

    async def _release(self) -> None:
        """Give the lease up (holder cleared, duration 1 s) when this candidate holds it; best effort, 5 s."""
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self._release_once(), 5)

    async def _release_once(self) -> None:
        current: Obj = await self.client.get(self.rt, self.config.name, self.config.namespace)
        if holder(current) != self.identity:
            return
        now = now_rfc3339_micro()
        old = current.get("spec") or {}
        current["spec"] = {"leaseDurationSeconds": 1, "acquireTime": now, "renewTime": now,
                           "leaseTransitions": int(old.get("leaseTransitions") or 0)}
        await self.client.update(self.rt, current)
        log.info("released lease %s/%s", self.config.namespace, self.config.name)


def config_from_flags(name: str, namespace: str, lease_duration: str, renew_deadline: str,
                      retry_period: str, identity: str = "") -> LeaderElectionConfig:
    """A config from the ``--leader-elect-*`` flag values (durations such as ``15s``).

    Raises ValueError naming the flag that is wrong."""
    from minik8s.api.durations import parse_duration

    values = {}
    for flag, text in (("lease-duration", lease_duration), ("renew-deadline", renew_deadline),
                       ("retry-period", retry_period)):
        try:
            values[flag] = parse_duration(text)
        except ValueError as exc:
            raise ValueError(f"--leader-elect-{flag}: {exc}") from exc
    config = LeaderElectionConfig(namespace=namespace, name=name, identity=identity,
                                  lease_duration=values["lease-duration"], renew_deadline=values["renew-deadline"],
                                  retry_period=values["retry-period"])
    config.validate()
    return config


async def run_elected(client: Client, config: LeaderElectionConfig | None, lead: Callable[[], Awaitable[Any]],
                      component: str) -> None:
    """Run ``lead()`` directly (``config`` None: ``--leader-elect=false``) or once elected.

    The election talks to the apiserver through a client of its own (same kubeconfig), as
    kube-scheduler's and kube-controller-manager's leader-election clientset: a busy component
    may have many requests queued in ``client`` (see its ``max_inflight``), and a renewal that
    waited behind them would miss the renew deadline.

    Raises :class:`LeadershipLost` when the lease is lost; the caller exits (as Kubernetes'
    components do) and is restarted as a candidate."""
    if config is None:
        await lead()
        return
    async with Client(client.config, registry=client.registry, retries=client.retries,
                      backoff=client.backoff, max_inflight=4) as election_client:
        elector = LeaderElector(election_client, config)
        log.info("%s: leader election on lease %s/%s as %s", component, config.namespace, config.name,
                 elector.identity)
        await elector.run(lead)
