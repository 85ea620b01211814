"""Authentication like kube-apiserver's: static bearer tokens and X.509 client certificates.

``--token-auth-file`` is a CSV of ``token,user,uid[,"group1,group2"]``;
``--client-ca-file`` makes the TLS listener ask for client certificates, and a
certificate that verifies against that CA authenticates as its CN (user) and
O (groups).  With neither configured every request is allowed (loopback
development setups).  With either, an unauthenticated request gets 401.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass, field
from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol


@dataclass(frozen=True)
class UserInfo:
    """Who made a request."""

    name: str
    uid: str = ""
    groups: tuple[str, ...] = field(default_factory=tuple)


ANONYMOUS = UserInfo("system:anonymous", groups=("system:unauthenticated",))


def load_token_file(path: str) -> dict[str, UserInfo]:
    """Parse a static token file; raises ValueError naming the bad line."""
    tokens: dict[str, UserInfo] = {}
    with open(path, newline="") as fh:
        for lineno, row in enumerate(csv.reader(fh), 1):
            if not row or row[0].startswith("#"):
                continue
            if len(row) < 3:
                raise ValueError(f"{path}:{lineno}: expected token,user,uid[,groups]")
            groups = tuple(g for g in (row[3].split(",") if len(row) > 3 else []) if g)
            tokens[row[0].strip()] = UserInfo(row[1].strip(), row[2].strip(), groups)
    return tokens


class Authenticator:
    """Decides who a request is from (``None``: unauthenticated)."""

    def __init__(self, tokens: dict[str, UserInfo] | None = None, client_certs: bool = False) -> None:
        self.tokens = tokens or {}
        self.client_certs = client_certs

    @property
    def enabled(self) -> bool:
        return bool(self.tokens) or self.client_certs

    def authenticate(self, scope: dict[str, Any]) -> UserInfo | None:
        if not self.enabled:
            return ANONYMOUS
        for name, value in scope.get("headers") or []:
            if name == b"authorization":
                kind, _, token = value.decode("latin-1").partition(" ")
                if kind.lower() == "bearer" and token.strip() in self.tokens:
                    return self.tokens[token.strip()]
        cert = ((scope.get("extensions") or {}).get("tls") or {}).get("client_cert")
        if self.client_certs and cert:
            subject = {k: v for rdn in cert.get("subject", ()) for k, v in rdn}
            cn = subject.get("commonName")
            if cn:
                groups = tuple(v for rdn in cert.get("subject", ()) for k, v in rdn if k == "organizationName")
                return UserInfo(cn, groups=groups)
        return None


class TLSInfoProtocol(HttpToolsProtocol):
    """uvicorn's HTTP protocol, plus the verified client certificate in ``scope["extensions"]["tls"]``.

    The TLS layer already verified the certificate against ``--client-ca-file``
    (``CERT_OPTIONAL``); this only exposes who it names to the application.
    """

    def on_message_begin(self) -> None:
        super().on_message_begin()
        self.scope["extensions"] = {"tls": {"client_cert": peer_certificate(self.transport)}}  # type: ignore[typeddict-unknown-key]


class TLSInfoWebSocketProtocol(WebSocketsSansIOProtocol):
    """The same for WebSocket upgrades (``pods/exec``), whose scope uvicorn builds separately."""

    async def run_asgi(self) -> None:
        extensions = dict(self.scope.get("extensions") or {})
        extensions["tls"] = {"client_cert": peer_certificate(self.transport)}
        self.scope["extensions"] = extensions  # type: ignore[typeddict-item]
        await super().run_asgi()


def peer_certificate(transport: Any) -> dict[str, Any] | None:
    """The client certificate the TLS layer verified (``ssl.SSLSocket.getpeercert`` shape), if any."""
    ssl_object = transport.get_extra_info("ssl_object") if transport is not None else None
    return ssl_object.getpeercert() if ssl_object is not None else None
