"""Node heartbeats shared by the kubelet and the hollow-node simulator.

- :class:`NodeLease` keeps Lease ``kube-node-lease/<node>`` fresh as the kubelet's node lease
  controller does: ``holderIdentity`` = the node, ``leaseDurationSeconds`` (40 s by default),
  ``renewTime`` as a MicroTime, an owner reference to the Node when its uid is known.  The last
  Lease written is kept and the next renewal is a PUT of it (no GET), as client-go's
  ``latestLease``; a 409 or 404 drops it and the renewal reads (or creates) the Lease again.
  :meth:`NodeLease.run` renews every quarter of the duration (10 s for 40 s).
- :func:`condition` builds one Node condition keeping ``lastTransitionTime`` while its status
  does not change (``lastHeartbeatTime`` is always now).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from minik8s.api import errors
from minik8s.api.base import Obj, now_rfc3339_micro
from minik8s.client.rest import Client

log = logging.getLogger("nodeheartbeat")

LEASE_NAMESPACE = "kube-node-lease"
DEFAULT_LEASE_DURATION_SECONDS = 40


def condition(old: list[Obj], ctype: str, status: str, reason: str, message: str, now: str) -> Obj:
    """Node condition ``ctype`` (``status`` "True"/"False"/"Unknown"); ``old`` is the Node's current
    ``status.conditions`` (for ``lastTransitionTime``), ``now`` an RFC 3339 time."""
    prev = next((c for c in old if c.get("type") == ctype), None)
    transition = prev["lastTransitionTime"] if prev and prev.get("status") == status and \
        prev.get("lastTransitionTime") else now
    return {"type": ctype, "status": status, "reason": reason, "message": message,
            "lastHeartbeatTime": now, "lastTransitionTime": transition}


class NodeLease:
    """The node Lease of ``node_name`` (``duration`` seconds); ``node_uid`` returns the Node's uid
    once known (for the owner reference, so deleting the Node collects its Lease).

    :meth:`renew` raises the API errors the apiserver answers (other than one retried 409/404)."""

    def __init__(self, client: Client, node_name: str, duration: int = DEFAULT_LEASE_DURATION_SECONDS,
                 node_uid: Callable[[], str | None] = lambda: None) -> None:
        self.client = client
        self.node_name = node_name
        self.duration = duration
        self.node_uid = node_uid
        self.leases_rt = client.kind("coordination.k8s.io/v1", "Lease")
        self.latest: Obj | None = None

    def _body(self, now: str) -> Obj:
        owner = []
        uid = self.node_uid()
        if uid:
            owner = [{"apiVersion": "v1", "kind": "Node", "name": self.node_name, "uid": uid}]
        return {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                "metadata": {"name": self.node_name, "namespace": LEASE_NAMESPACE, "ownerReferences": owner},
                "spec": {"holderIdentity": self.node_name, "leaseDurationSeconds": self.duration,
                         "renewTime": now, "acquireTime": now}}

    async def renew(self) -> Obj:
        """Create or renew the Lease; returns it as stored."""
        for attempt in range(2):
            now = now_rfc3339_micro()
            lease = self.latest
            if lease is None:
                try:
                    lease = await self.client.get(self.leases_rt, self.node_name, LEASE_NAMESPACE)
                except errors.NotFound:
                    try:
                        self.latest = await self.client.create(self.leases_rt, self._body(now), LEASE_NAMESPACE)
                    except errors.AlreadyExists:
                        if attempt:
                            raise
                        continue
                    return self.latest
            body = {**lease, "spec": {**(lease.get("spec") or {}), "holderIdentity": self.node_name,
                                      "leaseDurationSeconds": self.duration, "renewTime": now}}
            try:
                self.latest = await self.client.update(self.leases_rt, body)
                return self.latest
            except (errors.Conflict, errors.NotFound):
                self.latest = None
                if attempt:
                    raise
        raise AssertionError("unreachable")

    async def run(self, stop: asyncio.Event | None = None, first_delay: float = 0.0) -> None:
        """Renew every quarter of the duration until ``stop`` is set (forever without one); failures
        are logged and retried after at most 2 s.  ``first_delay`` spreads many leases over time."""
        stop = stop or asyncio.Event()
        interval = max(self.duration / 4, 0.5)
        delay = first_delay
        while not stop.is_set():
            if delay > 0:
                try:
                    await asyncio.wait_for(stop.wait(), delay)
                    return
                except TimeoutError:
                    pass
            try:
                await self.renew()
                delay = interval
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # noqa: BLE001 - the apiserver may be away
                log.warning("node=%s lease renewal failed: %s", self.node_name, exc)
                delay = min(interval, 2.0)
