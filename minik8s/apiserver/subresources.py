"""Pod subresources: ``binding`` (the scheduler's decision), ``log``, ``exec`` and ``portforward``
(proxied to the kubelet).

The kubelet serves (see :mod:`minik8s.kubelet.server`):
``GET /containerLogs/{ns}/{pod}/{container}`` (plain text, streamed with ``follow``),
the WebSocket ``/exec/{ns}/{pod}/{container}?command=...`` speaking Kubernetes'
``v4/v5.channel.k8s.io`` protocol (first byte of each frame: 0 stdin,
1 stdout, 2 stderr, 3 error/status, 4 resize) and the WebSocket ``/portForward/{ns}/{pod}?ports=...``
(channels 2i data and 2i+1 error of the i-th port).  The apiserver finds and reaches the
kubelet through :class:`~minik8s.apiserver.kubelet_client.KubeletClient` (the Node's
InternalIP and ``daemonEndpoints.kubeletEndpoint.Port``; https/wss with the
``--kubelet-*`` flags).
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import copy
import logging
from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import urlencode

import httpx
import websockets
from fastapi import FastAPI, Request, WebSocket, WebSocketDisconnect
from fastapi.responses import Response, StreamingResponse

from minik8s.api import errors, kubejsonpath
from minik8s.api.base import now_rfc3339
from minik8s.api.resourcetypes import ResourceType
from minik8s.apiserver import fieldmanager, spdy
from minik8s.apiserver.httpio import KubeJSONResponse, read_body, status_json
from minik8s.apiserver.kubelet_client import KubeletClient, kubelet_error

log = logging.getLogger("apiserver")

CHANNEL_PROTOCOLS = ["v5.channel.k8s.io", "v4.channel.k8s.io", "channel.k8s.io", "v4.base64.channel.k8s.io",
                     "base64.channel.k8s.io"]
LOG_PARAMS = ("follow", "tailLines", "timestamps", "previous", "sinceSeconds", "limitBytes")


class PodSubresources:
    """``pods/{name}/binding``, ``pods/{name}/log``, ``pods/{name}/exec``, ``/attach`` and ``/portforward``."""

    def __init__(self, api: Any, kubelet: KubeletClient) -> None:
        self.api = api
        self.kubelet = kubelet

    async def handle(self, request: Request, rt: ResourceType, namespace: str | None, name: str,
                     sub: str) -> Response:
        if sub == "binding":
            if request.method != "POST":
                raise errors.MethodNotAllowed("binding only supports POST")
            body = await read_body(request)
            return KubeJSONResponse(await self.bind(rt, namespace or "", name, body), status_code=201)
        if sub == "log":
            if request.method != "GET":
                raise errors.MethodNotAllowed("log only supports GET")
            return await self.logs(rt, namespace or "", name, dict(request.query_params))
        raise errors.BadRequest(f"Upgrade request required: {sub} needs a WebSocket connection "
                                "(Sec-WebSocket-Protocol v5.channel.k8s.io or v4.channel.k8s.io)")

    # ------------------------------------------------------------------ binding
    async def bind(self, rt: ResourceType, namespace: str, name: str, body: Any) -> dict[str, Any]:
        """Assign the pod to ``body.target.name``: 409 when it is already bound (Kubernetes' assignPod)."""
        if not isinstance(body, dict) or not (body.get("target") or {}).get("name"):
            raise errors.invalid("Binding", name, [("target.name", None, "Required value")])
        node = body["target"]["name"]
        if (body.get("metadata") or {}).get("name") not in (None, name):
            raise errors.BadRequest("the name of the binding does not match the pod")
        for _ in range(10):
            pod = await self.api.get(rt, namespace, name)
            if pod["metadata"].get("deletionTimestamp"):
                raise errors.Conflict(f"pod {name} is being deleted, cannot be assigned to a host")
            bound = (pod.get("spec") or {}).get("nodeName")
            if bound:
                raise errors.Conflict(f"pod {name} is already assigned to node \"{bound}\"")
            if (pod.get("spec") or {}).get("schedulingGates"):
                raise errors.Conflict(f"pod {name} has non-empty .spec.schedulingGates")
            new = copy.deepcopy(pod)
            new["spec"]["nodeName"] = node
            conds = [c for c in (new.setdefault("status", {}).get("conditions") or [])
                     if c.get("type") != "PodScheduled"]
            conds.append({"type": "PodScheduled", "status": "True", "lastTransitionTime": now_rfc3339()})
            new["status"]["conditions"] = conds
            key = rt.storage_key(namespace, name)
            try:
                await self.api.store.update(key, new, int(pod["metadata"]["resourceVersion"]))
            except errors.Conflict:
                continue
            return errors.status_object("Success", code=201)
        raise errors.Conflict(f"pod {name} changed too often while binding; try again")

    # ------------------------------------------------------------------ kubelet location
    async def _locate(self, rt: ResourceType, namespace: str, name: str,
                      container: str | None, any_container: bool = False) -> tuple[str, str]:
        """(kubelet address, container) of a bound pod; ``any_container``: the first one will do
        (portforward: the containers share the pod's network)."""
        pod = await self.api.get(rt, namespace, name)
        containers = [c["name"] for c in (pod.get("spec") or {}).get("containers") or []]
        if any_container and not container and containers:
            container = containers[0]
        if not container:
            if len(containers) != 1:
                raise errors.BadRequest(f"a container name must be specified for pod {name}, "
                                        f"choose one of: [{' '.join(containers)}]")
            container = containers[0]
        elif container not in containers and not any(
                c.get("name") == container for kind in ("initContainers", "ephemeralContainers")
                for c in (pod.get("spec") or {}).get(kind) or []):
            raise errors.BadRequest(f"container {container} is not valid for pod {name}")
        node_name = (pod.get("spec") or {}).get("nodeName")
        if not node_name:
            raise errors.BadRequest(f"pod {name} does not have a host assigned")
        return await self.kubelet.locate(self.api, node_name), container

    # ------------------------------------------------------------------ logs
    async def logs(self, rt: ResourceType, namespace: str, name: str, params: dict[str, str]) -> Response:
        """Stream a container's log from its kubelet (``follow`` keeps the stream open)."""
        address, container = await self._locate(rt, namespace, name, params.get("container"))
        query = urlencode({k: v for k, v in params.items() if k in LOG_PARAMS})
        url = self.kubelet.url(address, f"/containerLogs/{namespace}/{name}/{container}?{query}")
        try:
            req = self.kubelet.http.build_request("GET", url)
            resp = await self.kubelet.http.send(req, stream=True)
        except httpx.HTTPError as exc:
            raise errors.ServiceUnavailable(f"the kubelet at {address} is unreachable: {exc}") from exc
        if resp.status_code >= 400:
            body = await resp.aread()
            await resp.aclose()
            raise kubelet_error(address, resp.status_code, body.decode(errors="replace"))

        async def relay() -> AsyncIterator[bytes]:
            try:
                async for chunk in resp.aiter_raw():
                    yield chunk
            finally:
                await resp.aclose()

        return StreamingResponse(relay(), media_type="text/plain")

    # ------------------------------------------------------------------ exec and portforward
    def register_websocket(self, app: FastAPI) -> None:
        pods_rt = self.api.registry.by_kind("v1", "Pod")

        @app.websocket("/api/v1/namespaces/{namespace}/pods/{name}/exec")
        async def exec_ws(websocket: WebSocket, namespace: str, name: str) -> None:
            await self._proxy_websocket(websocket, pods_rt, namespace, name, "exec")

        @app.websocket("/api/v1/namespaces/{namespace}/pods/{name}/attach")
        async def attach_ws(websocket: WebSocket, namespace: str, name: str) -> None:
            await self._proxy_websocket(websocket, pods_rt, namespace, name, "attach")

        @app.websocket("/api/v1/namespaces/{namespace}/pods/{name}/portforward")
        async def portforward_ws(websocket: WebSocket, namespace: str, name: str) -> None:
            await self._proxy_websocket(websocket, pods_rt, namespace, name, "portforward")

    async def _proxy_websocket(self, websocket: WebSocket, pods_rt: Any, namespace: str, name: str,
                               sub: str) -> None:
        """Splice a client's ``exec``, ``attach`` or ``portforward`` WebSocket to the pod's kubelet.

        An error before that (no such pod, no node, kubelet unreachable) is, for exec and attach, a ``Status``
        on channel 3 after the upgrade; for portforward the upgrade is refused (HTTP 403), as its
        channels have no place for a Status before the ports' initial frames."""
        params = websocket.query_params
        offered = [p.strip() for p in websocket.headers.get("sec-websocket-protocol", "").split(",") if p]
        proto = next((p for p in offered if p in CHANNEL_PROTOCOLS), None)

        async def refuse(err: errors.APIError) -> None:
            log.info("apiserver %s pod=%s/%s refused: %s", sub, namespace, name, err.message)
            if sub == "portforward":
                await websocket.close(code=1008, reason=err.message[:120])
                return
            await websocket.accept(subprotocol=proto)
            if proto and "base64" in proto:
                await websocket.send_text("3" + base64.b64encode(status_json(err)).decode())
            else:
                await websocket.send_bytes(b"\x03" + status_json(err))
            await websocket.close()

        try:
            address, container = await self._locate(pods_rt, namespace, name, params.get("container"),
                                                    any_container=sub == "portforward")
        except errors.APIError as exc:
            await refuse(exc)
            return
        if sub == "portforward" and spdy.SUBPROTOCOL in offered:
            await self._spdy_port_forward(websocket, address, namespace, name)
            return
        query = urlencode([(k, v) for k, v in params.multi_items() if k != "container"])
        path = f"/portForward/{namespace}/{name}?{query}" if sub == "portforward" else \
            f"/{sub}/{namespace}/{name}/{container}?{query}"
        try:
            upstream = await self.kubelet.connect_websocket(address, path, [proto] if proto else None)
        except Exception as exc:  # noqa: BLE001
            if isinstance(exc, websockets.InvalidStatus):
                err = kubelet_error(address, exc.response.status_code,
                                    exc.response.body.decode(errors="replace") if exc.response.body else "")
            else:
                err = errors.ServiceUnavailable(f"the kubelet at {address} is unreachable: {exc}")
            await refuse(err)
            return
        await websocket.accept(subprotocol=proto)
        await _splice(websocket, upstream, ends_with_status=sub != "portforward")

    async def _spdy_port_forward(self, websocket: WebSocket, address: str, namespace: str, name: str) -> None:
        """kubectl's SPDY-in-WebSocket port forwarding (:mod:`minik8s.apiserver.spdy`): one kubelet
        ``/portForward`` WebSocket per forwarded connection."""
        async def open_upstream(port: int) -> Any:
            return await self.kubelet.connect_websocket(address, f"/portForward/{namespace}/{name}?ports={port}",
                                                        ["v4.channel.k8s.io"])

        await websocket.accept(subprotocol=spdy.SUBPROTOCOL)
        log.info("apiserver portforward pod=%s/%s over %s", namespace, name, spdy.SUBPROTOCOL)
        try:
            await spdy.serve_tunnel(websocket, open_upstream, f"{namespace}/{name}")
        finally:
            with contextlib.suppress(Exception):
                await websocket.close()


async def _splice(client: WebSocket, upstream: Any, ends_with_status: bool = False) -> None:
    """Copy frames both ways until either side closes.

    The client's close frame follows the stream's last frame at once, as kube-apiserver's does:
    with ``ends_with_status`` (exec and attach), right after the frame on the error channel 3
    (the remotecommand protocol's last: the exit status), else as soon as the kubelet's stream
    ends, before the kubelet's own close handshake is done.  A client that acts on the status
    while its reader still waits on the socket must find the close already there: lightkube's sync
    exec (httpx2) closes its socket under a reader thread still in ``SSL_read``, and that stale
    reader broke the TLS handshake of the next connection, which reused the file descriptor
    (``[SSL: WRONG_VERSION_NUMBER]``; tests/integration/test_tls_connection_stress.py).
    """

    async def down() -> None:
        async for msg in upstream:
            if isinstance(msg, bytes):
                await client.send_bytes(msg)
            else:
                await client.send_text(msg)
            if ends_with_status and msg[:1] in (b"\x03", "3"):
                break
        with contextlib.suppress(Exception):  # the stream is over: the client's close goes out now
            await client.close()

    async def up() -> None:
        while True:
            msg = await client.receive()
            if msg["type"] == "websocket.disconnect":
                return
            if msg.get("bytes") is not None:
                await upstream.send(msg["bytes"])
            elif msg.get("text") is not None:
                await upstream.send(msg["text"])

    tasks = [asyncio.create_task(down()), asyncio.create_task(up())]
    try:
        await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
    except WebSocketDisconnect:
        pass
    finally:
        for t in tasks:
            t.cancel()
        await upstream.close()
        with contextlib.suppress(Exception):
            await client.close()


class ScaleSubresource:
    """``{plural}/{name}/scale`` (autoscaling/v1 Scale) for kinds with ``spec.replicas``.

    GET builds the Scale from the object; PUT/PATCH change only ``spec.replicas``
    (a stale ``metadata.resourceVersion`` in the Scale → 409, as for the object).
    """

    def __init__(self, api: Any) -> None:
        self.api = api

    @staticmethod
    def to_scale(obj: dict[str, Any], rt: ResourceType | None = None) -> dict[str, Any]:
        """The Scale of ``obj``; a custom resource's from its CRD's ``specReplicasPath``,
        ``statusReplicasPath`` and ``labelSelectorPath`` (absent values: 0 and ``""``)."""
        from minik8s.api.selectors import workload_selector

        meta = obj["metadata"]
        if rt is not None and rt.custom is not None:
            def first(path: str, empty: Any) -> Any:
                found = kubejsonpath.find(obj, path) if path else []
                return found[0] if found and found[0] is not None else empty
            return {
                "apiVersion": "autoscaling/v1", "kind": "Scale",
                "metadata": {k: meta[k] for k in ("name", "namespace", "uid", "resourceVersion", "creationTimestamp")
                             if k in meta},
                "spec": {"replicas": first(rt.custom.spec_replicas_path, 0)},
                "status": {"replicas": first(rt.custom.status_replicas_path, 0),
                           "selector": str(first(rt.custom.label_selector_path, ""))},
            }
        selector = (obj.get("spec") or {}).get("selector")
        selector_text = str(workload_selector(obj)) if selector else ""
        return {
            "apiVersion": "autoscaling/v1", "kind": "Scale",
            "metadata": {k: meta[k] for k in ("name", "namespace", "uid", "resourceVersion", "creationTimestamp")
                         if k in meta},
            "spec": {"replicas": (obj.get("spec") or {}).get("replicas", 0)},
            "status": {"replicas": (obj.get("status") or {}).get("replicas", 0), "selector": selector_text},
        }

    async def handle(self, request: Request, rt: ResourceType, namespace: str | None, name: str) -> Response:
        from minik8s.api.patch import json_merge_patch, json_patch, strategic_merge_patch

        current = await self.api.get(rt, namespace, name)
        if request.method == "GET":
            return KubeJSONResponse(self.to_scale(current, rt))
        body = await read_body(request)
        scale = self.to_scale(current, rt)
        if request.method == "PUT":
            new_scale = body
        elif request.method == "PATCH":
            ctype = request.headers.get("content-type", "").split(";")[0].strip()
            try:
                if ctype == "application/json-patch+json":
                    new_scale = json_patch(scale, body)
                elif ctype == "application/strategic-merge-patch+json":
                    new_scale = strategic_merge_patch(scale, body)
                else:
                    new_scale = json_merge_patch(scale, body)
            except ValueError as exc:
                raise errors.Invalid(f"the patch could not be applied: {exc}") from exc
        else:
            raise errors.MethodNotAllowed(f"{request.method} is not supported on scale")
        if not isinstance(new_scale, dict):
            raise errors.BadRequest("the body must be a Scale object")
        replicas = (new_scale.get("spec") or {}).get("replicas")
        if not isinstance(replicas, int) or replicas < 0:
            raise errors.invalid("Scale.autoscaling", name,
                                 [("spec.replicas", replicas, "must be greater than or equal to 0")])
        wanted_rv = (new_scale.get("metadata") or {}).get("resourceVersion")
        obj = copy.deepcopy(current)
        fields = (kubejsonpath.simple_fields(rt.custom.spec_replicas_path) if rt.custom is not None
                  else ["spec", "replicas"])
        target = obj
        for key in (fields or ["spec", "replicas"])[:-1]:
            target = target.setdefault(key, {})
        target[(fields or ["spec", "replicas"])[-1]] = replicas
        if request.method == "PUT" and wanted_rv:
            obj["metadata"]["resourceVersion"] = wanted_rv
        else:
            obj["metadata"].pop("resourceVersion", None)
        manager = request.query_params.get("fieldManager") or \
            fieldmanager.manager_from_user_agent(request.headers.get("user-agent", ""))
        updated = await self.api.update(rt, namespace, name, obj, manager=manager)
        return KubeJSONResponse(self.to_scale(updated, rt))
