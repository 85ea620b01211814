"""How the apiserver reaches kubelets: their address, the scheme, TLS, and the HTTP and WebSocket clients.

kube-apiserver's ``KubeletClientConfig``.  A Node's kubelet listens on the Node's InternalIP
at ``status.daemonEndpoints.kubeletEndpoint.Port`` (10250 when unset).  Flags:

- ``--kubelet-client-certificate`` / ``--kubelet-client-key``: the client certificate the
  apiserver presents, which a kubelet with ``--client-ca-file`` requires (kubeadm names its
  user ``kube-apiserver-kubelet-client``; see :mod:`minik8s.kubelet.authorization`).
- ``--kubelet-certificate-authority``: verify the kubelet's serving certificate, and that it
  names the address connected to, against this CA.  Without it the serving certificate is
  not verified (kube-apiserver's default).

With any of them the apiserver speaks https/wss to kubelets, else plain http/ws (the local
``minik8s up`` cluster, whose kubelet serves plain HTTP on loopback).  One
:class:`KubeletClient` serves ``pods/log`` and ``pods/exec``
(:mod:`minik8s.apiserver.subresources`) and the metrics scraper
(:mod:`minik8s.apiserver.metrics`).
"""

from __future__ import annotations

import ssl
from typing import Any

import httpx
import websockets
from websockets.asyncio.client import ClientConnection

from minik8s.api import errors
from minik8s.api.base import Obj

#: The kubelet's port when the Node does not say (``--port`` of the kubelet).
DEFAULT_PORT = 10250
#: Seconds to connect to a kubelet (reads are not limited: ``follow`` streams stay open).
CONNECT_TIMEOUT = 10.0


def kubelet_address(node: Obj) -> str | None:
    """``host:port`` of a Node's kubelet: its InternalIP and ``daemonEndpoints.kubeletEndpoint.Port``
    (10250 when unset), an IPv6 address in brackets; None without an InternalIP or with port 0
    (a node that serves no kubelet API, as a hollow node: never contacted)."""
    status = node.get("status") or {}
    ip = next((a.get("address") for a in status.get("addresses") or [] if a.get("type") == "InternalIP"), None)
    if not ip:
        return None
    endpoint = (status.get("daemonEndpoints") or {}).get("kubeletEndpoint") or {}
    if "Port" in endpoint and not endpoint["Port"]:
        return None
    port = endpoint.get("Port") or DEFAULT_PORT
    return f"[{ip}]:{port}" if ":" in ip else f"{ip}:{port}"


def kubelet_ssl_context(client_certificate: str | None = None, client_key: str | None = None,
                        certificate_authority: str | None = None) -> ssl.SSLContext:
    """The TLS client context for kubelets (see the module docstring).

    Raises ValueError naming the flag when a file is missing or does not load, or when only
    one of certificate and key is given.
    """
    if bool(client_certificate) != bool(client_key):
        raise ValueError("--kubelet-client-certificate and --kubelet-client-key go together")
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    if certificate_authority:
        try:
            ctx.load_verify_locations(certificate_authority)
        except (OSError, ssl.SSLError) as exc:
            raise ValueError(f"--kubelet-certificate-authority: cannot load {certificate_authority}: {exc}") from exc
    else:
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
    if client_certificate and client_key:
        try:
            ctx.load_cert_chain(client_certificate, client_key)
        except (OSError, ssl.SSLError) as exc:
            raise ValueError(f"--kubelet-client-certificate/--kubelet-client-key: cannot load {client_certificate} "
                             f"and {client_key}: {exc}") from exc
    return ctx


def kubelet_error(address: str, status: int, body: str) -> errors.APIError:
    """The API error for a kubelet's error answer (``status`` ≥ 400, ``body`` its text).

    401 and 403 pass through as Unauthorized/Forbidden (as kube-apiserver relays them, e.g.
    ``Forbidden (user=..., verb=get, resource=nodes, subresource=proxy)``), naming the
    kubelet; anything else is a BadRequest carrying the kubelet's message.
    """
    text = body.strip() or f"kubelet answered {status}"
    if status == 401:
        return errors.Unauthorized(f"the kubelet at {address} did not accept the apiserver's credentials: {text}")
    if status == 403:
        return errors.Forbidden(f"the kubelet at {address} refused the apiserver: {text}")
    return errors.BadRequest(text)


class KubeletClient:
    """The apiserver's connections to kubelets (see the module docstring).

    ``http`` is a shared ``httpx.AsyncClient`` (connect timeout :data:`CONNECT_TIMEOUT`, no read
    timeout); :meth:`url` and :meth:`connect_websocket` use the scheme the flags call for.
    Raises ValueError for bad flags (see :func:`kubelet_ssl_context`).  Close with :meth:`aclose`.
    """

    def __init__(self, client_certificate: str | None = None, client_key: str | None = None,
                 certificate_authority: str | None = None) -> None:
        self.secure = bool(client_certificate or client_key or certificate_authority)
        self.ssl_context = (kubelet_ssl_context(client_certificate, client_key, certificate_authority)
                            if self.secure else None)
        self.http = httpx.AsyncClient(timeout=httpx.Timeout(CONNECT_TIMEOUT, read=None),
                                      verify=self.ssl_context or False)

    @property
    def scheme(self) -> str:
        """``https`` or ``http``."""
        return "https" if self.secure else "http"

    def url(self, address: str, path: str) -> str:
        """The URL of ``path`` (with its query) on the kubelet at ``address`` (``host:port``)."""
        return f"{self.scheme}://{address}{path}"

    async def locate(self, api: Any, node_name: str) -> str:
        """``host:port`` of ``node_name``'s kubelet, read from the Node in storage.

        Raises ServiceUnavailable when the Node is gone, has no InternalIP or serves no kubelet API.
        """
        node_rt = api.registry.by_kind("v1", "Node")
        try:
            node = await api.get(node_rt, None, node_name)
        except errors.NotFound:
            raise errors.ServiceUnavailable(f'node "{node_name}" is gone') from None
        address = kubelet_address(node)
        if address is None:
            raise errors.ServiceUnavailable(f'node "{node_name}" has no InternalIP or no kubelet endpoint')
        return address

    async def connect_websocket(self, address: str, path: str, subprotocols: list[str] | None) -> ClientConnection:
        """Open a WebSocket (``wss``/``ws``) to ``path`` on the kubelet at ``address``.

        No frame size limit; :data:`CONNECT_TIMEOUT` for the handshake.  Raises what
        ``websockets.connect`` raises (``InvalidStatus`` when the kubelet answers the upgrade
        with an HTTP error, ``OSError``, ``TimeoutError``, ``ssl.SSLError``).
        """
        scheme = "wss" if self.secure else "ws"
        return await websockets.connect(f"{scheme}://{address}{path}", ssl=self.ssl_context,
                                        subprotocols=subprotocols,  # type: ignore[arg-type]
                                        max_size=None, open_timeout=CONNECT_TIMEOUT)

    async def aclose(self) -> None:
        """Close the pooled HTTP connections."""
        await self.http.aclose()
