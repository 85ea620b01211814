"""The async REST client every component and kubectl use.

Objects travel as wire-form dicts; Status failures raise the matching
:mod:`minik8s.api.errors` class (NotFound, Conflict, AlreadyExists, Invalid,
Unauthorized, ...).  Transport errors are retried with exponential back-off
(only for requests that are safe to repeat, and for any request that never
reached the server); after the last try they raise :class:`ServerUnavailable`.

Requests go through a :class:`~minik8s.client.transport.Transport`: httpx's pooled client for
the components (the default), the standard library's ``http.client`` for kubectl (which then
starts without importing httpx); see :mod:`minik8s.client.transport`.

Failover: when the kubeconfig lists several apiservers (``server`` plus the
``minik8s.io/servers`` cluster extension, :mod:`minik8s.client.kubeconfig`), a connection
that cannot be opened (refused, connect timeout) moves the client to the next server at once
-- a request never reached the old one, so any verb may be repeated there -- and a broken
watch reconnects to whichever server the client uses now.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import ssl
from collections.abc import AsyncIterator, Callable
from typing import Any
from urllib.parse import quote

from minik8s.api import errors
from minik8s.api.resourcetypes import Registry, ResourceType, from_discovery
from minik8s.client import transport as transports
from minik8s.client.kubeconfig import ClientConfig, load
from minik8s.client.transport import Response, Transport

log = logging.getLogger("client")

PATCH_TYPES = {
    "merge": "application/merge-patch+json",
    "strategic": "application/strategic-merge-patch+json",
    "json": "application/json-patch+json",
}


class ServerUnavailable(errors.ServiceUnavailable):
    """The apiserver could not be reached (connection refused, DNS, TLS, timeouts)."""


def resource_path(rt: ResourceType, namespace: str | None = None, name: str | None = None,
                  subresource: str | None = None) -> str:
    """The REST path of a collection, an object or a subresource."""
    base = "/api/v1" if not rt.group else f"/apis/{rt.group}/{rt.version}"
    if rt.namespaced and namespace:
        base += f"/namespaces/{quote(namespace)}"
    path = f"{base}/{rt.plural}"
    if name:
        path += f"/{quote(name)}"
        if subresource:
            path += f"/{subresource}"
    return path


def _clean(params: dict[str, Any]) -> dict[str, Any]:
    return {k: (str(v).lower() if isinstance(v, bool) else v) for k, v in params.items() if v not in (None, "")}


class Client:
    """An apiserver client. Use ``async with Client(...)`` or call :meth:`close`.

    ``retries`` transport-level attempts are made with back-off from ``backoff``
    seconds doubling up to 5 s.

    At most ``max_inflight`` requests (watches excepted) are sent at once; the others wait
    their turn in arrival order.  httpx's connection pool looks through every queued request
    on each change (O(queued x connections)), so a component that starts thousands of
    requests at once (a scheduler burst, 1,000 hollow nodes renewing Leases) would otherwise
    spend its CPU in the pool instead of on the requests.

    ``transport``: ``"httpx"`` (the default) or ``"stdlib"`` (see the module's docstring).
    """

    def __init__(self, config: ClientConfig | None = None, registry: Registry | None = None,
                 retries: int = 5, backoff: float = 0.2, timeout: float = 30.0,
                 warning_handler: Callable[[str], None] | None = None, max_inflight: int = 64,
                 transport: str = "httpx") -> None:
        self.config = config or ClientConfig()
        self._inflight = asyncio.Semaphore(max_inflight)
        #: called with the text of each ``Warning`` header of a response (kubectl prints them)
        self.warning_handler = warning_handler
        if registry is None:
            # the apiserver's own table, with its pydantic models: imported only when needed, so
            # that kubectl (which builds its registry from discovery) starts without them
            from minik8s.api.registry import default_registry
            registry = default_registry()
        self.registry = registry
        self.retries = retries
        self.backoff = backoff
        self._server = 0  # index into config.servers
        headers = [("Accept", "application/json"), ("User-Agent", "minik8s/0.1")]
        if self.config.token:
            headers.append(("Authorization", f"Bearer {self.config.token}"))
        headers += self.config.impersonation_headers()
        self.transport: Transport
        #: the TLS settings every new connection takes (True: plain HTTP or the system CAs)
        self.ssl_context = self.config.ssl_context()
        if transport == "stdlib":
            from minik8s.client.stdlibtransport import StdlibTransport
            self.transport = StdlibTransport(self.config.servers[0], headers, self.ssl_context, timeout)
        else:
            from minik8s.client.httpxtransport import HttpxTransport
            self.transport = HttpxTransport(self.config.servers[0], headers, self.ssl_context, timeout,
                                            max_keepalive=max_inflight)

    @classmethod
    def from_kubeconfig(cls, path: str | None = None, context: str | None = None, **kwargs: Any) -> Client:
        """A client for the cluster the kubeconfig names (see :func:`minik8s.client.kubeconfig.load`)."""
        return cls(load(path, context), **kwargs)

    def use_client_certificate(self, cert_file: str, key_file: str) -> None:
        """Present this certificate and key from now on (a rotated kubelet client certificate): connections
        made from now on use them; open ones keep theirs until they close.  OSError or ssl.SSLError when
        the files do not hold a matching pair (the old pair stays)."""
        if not isinstance(self.ssl_context, ssl.SSLContext):
            raise ValueError("client certificates need an https server")
        self.ssl_context.load_cert_chain(cert_file, key_file)
        self.config.cert_file, self.config.key_file = cert_file, key_file

    async def __aenter__(self) -> Client:
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.close()

    async def close(self) -> None:
        await self.transport.aclose()

    @property
    def server(self) -> str:
        """The apiserver URL requests go to now (changes on failover)."""
        return self.config.servers[self._server]

    def _fail_over(self) -> bool:
        """Move to the next apiserver of the kubeconfig; False when there is only one."""
        servers = self.config.servers
        if len(servers) < 2:
            return False
        old = servers[self._server]
        self._server = (self._server + 1) % len(servers)
        self.transport.base_url = servers[self._server]
        log.warning("apiserver %s unreachable; failing over to %s", old, servers[self._server])
        return True

    def resource(self, name: str) -> ResourceType:
        """Resolve ``pods``, ``po``, ``Pod`` ... to a ResourceType; raises NotFound."""
        rt = self.registry.resolve(name)
        if rt is None:
            raise errors.NotFound(f'the server doesn\'t have a resource type "{name}"')
        return rt

    def kind(self, api_version: str | None, kind: str) -> ResourceType:
        rt = self.registry.by_kind(api_version, kind)
        if rt is None:
            raise errors.NotFound(f'no matches for kind "{kind}" in version "{api_version}"')
        return rt

    async def discover_kind(self, api_version: str | None, kind: str) -> ResourceType:
        """:meth:`kind`, else the row the server's discovery gives ``api_version`` (a custom
        resource's, from its CRD), remembered in :attr:`registry`; raises NotFound."""
        rt = self.registry.by_kind(api_version, kind)
        if rt is not None or not api_version or "/" not in api_version:
            return self.kind(api_version, kind)
        group, version = api_version.split("/", 1)
        try:
            doc = await self.request("GET", f"/apis/{group}/{version}")
        except errors.NotFound:
            doc = {}
        for rt in from_discovery(doc, group, version):
            if rt.kind == kind:
                self.registry.add(rt)
                return rt
        return self.kind(api_version, kind)

    # ------------------------------------------------------------------ transport
    async def request(self, method: str, path: str, *, params: dict[str, Any] | None = None,
                      body: Any = None, content_type: str = "application/json",
                      timeout: float | None = None, accept: str | None = None) -> Any:
        """One API call; returns the decoded JSON body (or text). Raises APIError subclasses.
        ``accept``: the ``Accept`` header, when not the client's ``application/json``."""
        content = None
        headers = {"Accept": accept} if accept else {}
        if body is not None:
            content = json.dumps(body).encode()
            headers["Content-Type"] = content_type
        resp = await self.send(method, path, params=params, content=content, headers=headers, timeout=timeout)
        return self.decode(resp)

    async def send(self, method: str, path: str, *, params: dict[str, Any] | None = None,
                   content: bytes | None = None, headers: dict[str, str] | None = None,
                   timeout: float | None = None) -> Response:
        """One request as it is (``content``: the body's bytes), with the client's retries and
        fail-over; the response is returned whatever its status (:meth:`decode` turns a failure
        into an APIError) and its ``Warning`` headers go to the warning handler.  Raises
        ServerUnavailable when the apiserver cannot be reached."""
        idempotent = method in ("GET", "HEAD", "PUT", "DELETE")
        delay = self.backoff
        tries = 0      # backed-off retries so far
        switched = 0   # servers moved to since the last back-off
        while True:
            try:
                async with self._inflight:
                    resp = await self.transport.request(method, path, params=_clean(params or {}), content=content,
                                                        headers=headers, timeout=timeout)
            except transports.RETRIABLE as exc:
                never_sent = isinstance(exc, transports.NEVER_SENT)
                if isinstance(exc, transports.ConnectError) \
                        and switched < len(self.config.servers) - 1 and self._fail_over():
                    switched += 1
                    continue  # another apiserver, at once: the request never reached this one
                if tries >= self.retries or not (idempotent or never_sent):
                    raise ServerUnavailable(f"cannot reach the apiserver at {self.server}: "
                                            f"{_failure_name(exc)} {exc}".strip()) from exc
                tries += 1
                switched = 0
                await asyncio.sleep(delay)
                delay = min(delay * 2, 5.0)
                continue
            if self.warning_handler is not None:
                for text in warning_texts(resp.header_list("warning")):
                    self.warning_handler(text)
            return resp

    @staticmethod
    def decode(resp: Response) -> Any:
        """The body of ``resp`` (JSON decoded, else text); raises the APIError of a failure status."""
        try:
            body: Any = resp.json() if "json" in resp.header("content-type") else resp.text
        except ValueError:
            body = resp.text
        if resp.status_code >= 400:
            raise errors.from_status(resp.status_code, body)
        return body

    # ------------------------------------------------------------------ verbs
    async def get(self, rt: ResourceType, name: str, namespace: str | None = None,
                  subresource: str | None = None) -> dict[str, Any]:
        return await self.request("GET", resource_path(rt, namespace, name, subresource))  # type: ignore[no-any-return]

    async def list(self, rt: ResourceType, namespace: str | None = None, *, label_selector: str | None = None,
                   field_selector: str | None = None, limit: int | None = None, continue_: str | None = None,
                   resource_version: str | None = None) -> dict[str, Any]:
        """One page of a list (``items``, ``metadata.resourceVersion``, ``metadata.continue``)."""
        params = {"labelSelector": label_selector, "fieldSelector": field_selector, "limit": limit,
                  "continue": continue_, "resourceVersion": resource_version}
        return await self.request("GET", resource_path(rt, namespace), params=params)  # type: ignore[no-any-return]

    async def list_all(self, rt: ResourceType, namespace: str | None = None, *, label_selector: str | None = None,
                       field_selector: str | None = None, page_size: int = 500) -> dict[str, Any]:
        """Every page of a list joined into one (resourceVersion of the first page)."""
        first = await self.list(rt, namespace, label_selector=label_selector, field_selector=field_selector,
                                limit=page_size)
        items = list(first.get("items") or [])
        token = (first.get("metadata") or {}).get("continue")
        while token:
            page = await self.list(rt, namespace, label_selector=label_selector, field_selector=field_selector,
                                   limit=page_size, continue_=token)
            items += page.get("items") or []
            token = (page.get("metadata") or {}).get("continue")
        first["items"] = items
        first.setdefault("metadata", {}).pop("continue", None)
        return first

    async def create(self, rt: ResourceType, obj: dict[str, Any], namespace: str | None = None,
                     dry_run: bool = False) -> dict[str, Any]:
        """POST ``obj``; ``dry_run``: the server validates and answers it without storing (``dryRun=All``)."""
        ns = namespace or (obj.get("metadata") or {}).get("namespace")
        if rt.namespaced and not ns:
            ns = self.config.namespace
        params = {"dryRun": "All"} if dry_run else None
        return await self.request("POST", resource_path(rt, ns), params=params, body=obj)  # type: ignore[no-any-return]

    async def update(self, rt: ResourceType, obj: dict[str, Any], subresource: str | None = None) -> dict[str, Any]:
        """PUT the object (its ``metadata.resourceVersion`` is the CAS precondition)."""
        meta = obj.get("metadata") or {}
        return await self.request(  # type: ignore[no-any-return]
            "PUT", resource_path(rt, meta.get("namespace"), meta["name"], subresource), body=obj)

    async def update_status(self, rt: ResourceType, obj: dict[str, Any]) -> dict[str, Any]:
        return await self.update(rt, obj, "status")

    async def patch(self, rt: ResourceType, name: str, patch: Any, namespace: str | None = None,
                    patch_type: str = "merge", subresource: str | None = None) -> dict[str, Any]:
        """PATCH with ``patch_type`` ``merge``, ``strategic`` or ``json``."""
        return await self.request(  # type: ignore[no-any-return]
            "PATCH", resource_path(rt, namespace, name, subresource), body=patch,
            content_type=PATCH_TYPES[patch_type])

    async def delete(self, rt: ResourceType, name: str, namespace: str | None = None, *,
                     grace_period_seconds: int | None = None, propagation_policy: str | None = None,
                     preconditions: dict[str, str] | None = None) -> dict[str, Any]:
        body: dict[str, Any] = {"kind": "DeleteOptions", "apiVersion": "v1"}
        if grace_period_seconds is not None:
            body["gracePeriodSeconds"] = grace_period_seconds
        if propagation_policy:
            body["propagationPolicy"] = propagation_policy
        if preconditions:
            body["preconditions"] = preconditions
        return await self.request("DELETE", resource_path(rt, namespace, name), body=body)  # type: ignore[no-any-return]

    async def delete_collection(self, rt: ResourceType, namespace: str | None = None, *,
                                label_selector: str | None = None) -> dict[str, Any]:
        return await self.request("DELETE", resource_path(rt, namespace),  # type: ignore[no-any-return]
                                  params={"labelSelector": label_selector})

    async def bind(self, namespace: str, name: str, node: str) -> dict[str, Any]:
        """POST the pod's ``binding`` subresource (what the scheduler does)."""
        body = {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": name, "namespace": namespace},
                "target": {"apiVersion": "v1", "kind": "Node", "name": node}}
        rt = self.kind("v1", "Pod")
        return await self.request("POST", resource_path(rt, namespace, name, "binding"), body=body)  # type: ignore[no-any-return]

    async def watch(self, rt: ResourceType, namespace: str | None = None, *, resource_version: str | None = None,
                    label_selector: str | None = None, field_selector: str | None = None,
                    timeout_seconds: int | None = None, allow_bookmarks: bool = True) -> AsyncIterator[dict[str, Any]]:
        """Stream watch events (``{"type", "object"}``) until the server ends the stream.

        Raises Gone (410) when ``resource_version`` is too old, ServerUnavailable when
        the apiserver cannot be reached.
        """
        params = _clean({"watch": "true", "resourceVersion": resource_version, "labelSelector": label_selector,
                         "fieldSelector": field_selector, "timeoutSeconds": timeout_seconds,
                         "allowWatchBookmarks": allow_bookmarks})
        try:
            async with self.transport.stream("GET", resource_path(rt, namespace), params=params) as resp:
                if resp.status_code >= 400:
                    self.decode(await resp.read())
                async for line in resp.aiter_lines():
                    if line.strip():
                        yield json.loads(line)
        except transports.TransportError as exc:
            if isinstance(exc, transports.ConnectError):
                self._fail_over()  # the next watch goes to another apiserver
            raise ServerUnavailable(f"watch on {rt.plural} broke: {_failure_name(exc)} {exc}".strip()) from exc

    async def stream_text(self, path: str, params: dict[str, Any] | None = None) -> AsyncIterator[str]:
        """GET a streamed text body (pod logs) chunk by chunk."""
        try:
            async with self.transport.stream("GET", path, params=_clean(params or {})) as resp:
                if resp.status_code >= 400:
                    self.decode(await resp.read())
                async for chunk in resp.aiter_text():
                    yield chunk
        except transports.TransportError as exc:
            if isinstance(exc, transports.ConnectError):
                self._fail_over()
            raise ServerUnavailable(f"cannot reach the apiserver at {self.server}: {exc}") from exc


def _failure_name(exc: BaseException) -> str:
    """The name of the library's own failure (``ConnectError``, ``ReadTimeout``) behind ``exc``."""
    return type(exc.__cause__ or exc).__name__


_WARNING = re.compile(r'^\d{3} \S+ "((?:[^"\\]|\\.)*)"')


def warning_texts(headers: list[str]) -> list[str]:
    """The texts of RFC 7234 ``Warning`` headers (``299 - "text"``; the apiserver sends UTF-8)."""
    out = []
    for header in headers:
        m = _WARNING.match(header)
        if not m:
            continue
        text = re.sub(r"\\(.)", r"\1", m.group(1))
        try:
            text = text.encode("latin-1").decode("utf-8")
        except (UnicodeEncodeError, UnicodeDecodeError):
            pass
        out.append(text)
    return out
