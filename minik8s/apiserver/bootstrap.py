"""What the apiserver keeps in place by itself: the system namespaces and ``default/kubernetes``.

Like kube-apiserver's bootstrap controller, a background loop (every ``period`` seconds,
so it also repairs what a user deleted, and it retries while etcd is not up yet):

* the Namespaces ``default``, ``kube-system``, ``kube-public`` and ``kube-node-lease``;
* the Service ``default/kubernetes``: ClusterIP = the first address of the service CIDR
  (``10.96.0.1``), port ``https`` 443 → the apiserver's port, no selector;
* its Endpoints are kept by the lease endpoint reconciler
  (:mod:`minik8s.apiserver.endpointreconciler`): the addresses of the live apiservers;
* the PriorityClasses ``system-node-critical`` and ``system-cluster-critical`` (kube-apiserver's
  ``scheduling/bootstrap-system-priority-classes`` post-start hook).
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import ipaddress
import logging
from typing import Any

from minik8s.api import errors
from minik8s.api.base import Obj
from minik8s.api.resourcetypes import Registry
from minik8s.api.scheduling import SYSTEM_PRIORITY_CLASSES

log = logging.getLogger("apiserver")

SYSTEM_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")
SERVICE_NAME = "kubernetes"


def kubernetes_service_ip(service_cidr: str) -> str:
    """The ``kubernetes`` Service's ClusterIP: the first address of ``service_cidr``."""
    return str(ipaddress.ip_network(service_cidr, strict=False).network_address + 1)



class Bootstrap:
    """Ensures the system namespaces and the ``kubernetes`` Service exist (see the module docstring)."""

    def __init__(self, api: Any, registry: Registry, service_cidr: str, advertise_host: str, port: int,
                 period: float = 10.0) -> None:
        self.api = api
        self.registry = registry
        self.service_ip = kubernetes_service_ip(service_cidr)
        self.advertise_host = advertise_host
        self.port = port
        self.period = period

    async def run(self, stop: asyncio.Event) -> None:
        """Ensure everything every ``period`` seconds (after a first wait: the caller ran
        :meth:`ensure` at start) until ``stop`` is set."""
        warned = False
        while True:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), self.period)
            if stop.is_set():
                return
            try:
                await self.ensure()
                warned = False
            except errors.APIError as exc:  # etcd not up yet: /readyz says so
                if not warned:
                    log.warning("apiserver bootstrap: %s (retrying every %.0fs)", exc.message, self.period)
                    warned = True

    async def ensure(self) -> None:
        """One pass: create what is missing."""
        ns_rt = self.registry.by_kind("v1", "Namespace")
        svc_rt = self.registry.by_kind("v1", "Service")
        assert ns_rt is not None and svc_rt is not None
        for ns in SYSTEM_NAMESPACES:
            await self._create_missing(ns_rt, None, {"metadata": {"name": ns}})
        await self._create_missing(svc_rt, "default", {
            "metadata": {"name": SERVICE_NAME, "labels": {"component": "apiserver", "provider": "kubernetes"}},
            "spec": {"type": "ClusterIP", "clusterIP": self.service_ip,
                     "ports": [{"name": "https", "port": 443, "protocol": "TCP", "targetPort": self.port}]}})
        pc_rt = self.registry.by_kind("scheduling.k8s.io/v1", "PriorityClass")
        if pc_rt is not None:
            for pc in SYSTEM_PRIORITY_CLASSES:
                await self._create_missing(pc_rt, None, copy.deepcopy(dict(pc)))

    async def _create_missing(self, rt: Any, namespace: str | None, body: Obj) -> None:
        try:  # look first: creating an existing Service would fail on its ClusterIP, not its name
            await self.api.get(rt, namespace, body["metadata"]["name"])
            return
        except errors.NotFound:
            pass
        try:
            await self.api.create(rt, namespace, body)
            log.info("apiserver bootstrap: created %s %s", rt.kind, body["metadata"]["name"])
        except errors.AlreadyExists:
            pass
