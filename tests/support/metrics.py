"""Helpers for the metrics API and HPA integration tests.

- :func:`start_apiserver`: a real ``minik8s apiserver`` whose metrics scraper runs every
  ``resolution`` seconds (the session fixture's apiserver scrapes every 15 s).
- :class:`SummaryStandIn`: a clearly labelled stand-in for a kubelet's stats endpoint — a tiny
  HTTP server on 127.0.0.1 that answers ``GET /stats/summary`` in the Summary API's shape
  for the pods the API says are bound to its Node, with the CPU and memory use the test
  sets per ``app`` label.  It registers its Node (Ready, InternalIP 127.0.0.1, its port as
  ``daemonEndpoints.kubeletEndpoint.Port``) and keeps the Node's Lease fresh, exactly what
  makes the apiserver scrape a kubelet.  It is how the HPA tests control the metrics; the
  metrics API test itself scrapes a real kubelet.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import os
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx

from minik8s.api import errors
from minik8s.api.base import Obj
from minik8s.client.rest import Client
from tests.support.processes import APIServer, Etcd, free_port, wait_http


def start_apiserver(etcd: Etcd, log_dir: Path, resolution: str) -> APIServer:
    """An apiserver on ``etcd`` with ``--metrics-resolution resolution``, once ``/readyz`` answers."""
    server = APIServer(etcd, log_dir, extra=["--metrics-resolution", resolution])
    wait_http(f"{server.url}/readyz")
    return server


def _now() -> str:
    return dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _micro_now() -> str:
    return dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class SummaryStandIn:
    """A stand-in kubelet stats endpoint (see the module docstring).

    ``usage[app] = (millicores, bytes)`` sets what each container of the pods labelled
    ``app=<app>`` uses; pods of other apps are reported idle (0 cores, 1 MiB).  Use as
    ``async with SummaryStandIn(client, api_url) as node:``; ``node.name`` is its Node.
    """

    def __init__(self, client: Client, api_url: str) -> None:
        self.client = client
        self.api_url = api_url
        self.name = f"standin-{os.urandom(3).hex()}"
        self.port = free_port()
        self.usage: dict[str, tuple[int, int]] = {}
        self.requests = 0
        self._server: ThreadingHTTPServer | None = None
        self._renewer: asyncio.Task[None] | None = None

    def summary(self) -> Obj:
        """The Summary document for the pods bound to this node (read from the API)."""
        pods = httpx.get(f"{self.api_url}/api/v1/pods", params={"fieldSelector": f"spec.nodeName={self.name}"},
                         timeout=5).json()["items"]
        stamp = _now()
        out = []
        for pod in pods:
            meta = pod["metadata"]
            if (pod.get("status") or {}).get("phase") != "Running" or meta.get("deletionTimestamp"):
                continue
            cpu, mem = self.usage.get((meta.get("labels") or {}).get("app", ""), (0, 1024 * 1024))
            containers = [{"name": c["name"], "cpu": {"time": stamp, "usageNanoCores": cpu * 1_000_000},
                           "memory": {"time": stamp, "workingSetBytes": mem}} for c in pod["spec"]["containers"]]
            out.append({"podRef": {"name": meta["name"], "namespace": meta["namespace"], "uid": meta["uid"]},
                        "cpu": {"time": stamp}, "containers": containers})
        return {"node": {"nodeName": self.name, "cpu": {"time": stamp, "usageNanoCores": 250_000_000},
                         "memory": {"workingSetBytes": 512 * 1024 * 1024}}, "pods": out}

    def _serve(self) -> ThreadingHTTPServer:
        stand_in = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 - http.server's name
                if self.path != "/stats/summary":
                    self.send_error(404)
                    return
                stand_in.requests += 1
                body = json.dumps(stand_in.summary()).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
                pass

        server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        threading.Thread(target=server.serve_forever, daemon=True, name=self.name).start()
        return server

    async def _register(self) -> None:
        node_rt = self.client.kind("v1", "Node")
        node = await self.client.create(node_rt, {"metadata": {"name": self.name}})
        node["status"] = {
            "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady",
                            "lastHeartbeatTime": _now(), "lastTransitionTime": _now()}],
            "addresses": [{"type": "InternalIP", "address": "127.0.0.1"}],
            "daemonEndpoints": {"kubeletEndpoint": {"Port": self.port}},
            "allocatable": {"cpu": "2", "memory": "4Gi", "pods": "110"},
            "capacity": {"cpu": "2", "memory": "4Gi", "pods": "110"}}
        await self.client.update_status(node_rt, node)
        lease_rt = self.client.kind("coordination.k8s.io/v1", "Lease")
        await self.client.create(lease_rt, {"metadata": {"name": self.name}, "spec": {
            "holderIdentity": self.name, "leaseDurationSeconds": 40, "renewTime": _micro_now()}}, "kube-node-lease")

    async def _renew(self) -> None:
        lease_rt = self.client.kind("coordination.k8s.io/v1", "Lease")
        while True:
            await asyncio.sleep(10)
            try:
                await self.client.patch(lease_rt, self.name, {"spec": {"renewTime": _micro_now()}}, "kube-node-lease")
            except errors.APIError:
                pass

    async def __aenter__(self) -> SummaryStandIn:
        self._server = self._serve()
        await self._register()
        self._renewer = asyncio.get_running_loop().create_task(self._renew())
        return self

    async def __aexit__(self, *exc: Any) -> None:
        if self._renewer:
            self._renewer.cancel()
            await asyncio.gather(self._renewer, return_exceptions=True)
        if self._server:
            self._server.shutdown()
            self._server.server_close()
        for rt, ns in ((self.client.kind("coordination.k8s.io/v1", "Lease"), "kube-node-lease"),
                       (self.client.kind("v1", "Node"), None)):
            try:
                await self.client.delete(rt, self.name, ns)
            except errors.APIError:
                pass
