"""How the apiserver connects to etcd: the ``--etcd-servers`` URL and its TLS flags.

kube-apiserver's etcd3 transport: an ``https://`` URL is spoken to over TLS, verifying the
server against ``--etcd-cafile`` (the system CAs without it) and presenting the client
certificate ``--etcd-certfile``/``--etcd-keyfile`` (what an etcd with ``--client-cert-auth``
demands).  An ``http://`` URL (or a bare ``host:port``) is plain, as in the local
``minik8s up`` cluster; the TLS flags are refused with it (kube-apiserver would silently
drop them).  Only the first URL of a comma-separated list is used.

aetcd 1.0 opens only insecure gRPC channels; :class:`SecureClient` is an ``aetcd.Client``
whose channel is a TLS one.
"""

from __future__ import annotations

import socket
import ssl
from dataclasses import dataclass
from urllib.parse import urlparse

import aetcd
import aetcd.rpc as rpc
import grpc
from aetcd import watcher

#: etcd's client port when the URL does not say.
DEFAULT_PORT = 2379


class EtcdConfigError(ValueError):
    """The etcd flags do not fit together or a file cannot be read (the message names the flag)."""


@dataclass(frozen=True)
class EtcdTLS:
    """PEM file paths: ``cafile`` (``--etcd-cafile``), ``certfile`` (``--etcd-certfile``),
    ``keyfile`` (``--etcd-keyfile``); any may be None."""

    cafile: str | None = None
    certfile: str | None = None
    keyfile: str | None = None

    def _read(self, path: str | None, flag: str) -> bytes | None:
        if not path:
            return None
        try:
            with open(path, "rb") as fh:
                return fh.read()
        except OSError as exc:
            raise EtcdConfigError(f"{flag}: cannot read {path}: {exc.strerror}") from exc

    def channel_credentials(self) -> grpc.ChannelCredentials:
        """gRPC TLS credentials from the files.  Raises EtcdConfigError."""
        if bool(self.certfile) != bool(self.keyfile):
            raise EtcdConfigError("--etcd-certfile and --etcd-keyfile go together")
        return grpc.ssl_channel_credentials(self._read(self.cafile, "--etcd-cafile"),
                                            self._read(self.keyfile, "--etcd-keyfile"),
                                            self._read(self.certfile, "--etcd-certfile"))

    def ssl_context(self) -> ssl.SSLContext:
        """The same trust and client certificate as an ``ssl`` client context.  Raises EtcdConfigError."""
        try:
            ctx = ssl.create_default_context(cafile=self.cafile)
        except (OSError, ssl.SSLError) as exc:
            raise EtcdConfigError(f"--etcd-cafile: cannot load {self.cafile}: {exc}") from exc
        if self.certfile and self.keyfile:
            try:
                ctx.load_cert_chain(self.certfile, self.keyfile)
            except (OSError, ssl.SSLError) as exc:
                raise EtcdConfigError(f"--etcd-certfile/--etcd-keyfile: cannot load {self.certfile} and "
                                      f"{self.keyfile}: {exc}") from exc
        return ctx


@dataclass(frozen=True)
class EtcdEndpoint:
    """Where etcd is: ``host``, ``port``, and ``tls`` (None: plain gRPC)."""

    host: str
    port: int
    tls: EtcdTLS | None = None

    @property
    def url(self) -> str:
        return f"{'https' if self.tls else 'http'}://{self.host}:{self.port}"


def parse_etcd_servers(servers: str, tls: EtcdTLS | None = None) -> EtcdEndpoint:
    """The endpoint of the first URL in ``--etcd-servers`` (``http://h:p``, ``https://h:p`` or ``h:p``).

    ``https`` gets ``tls`` (or system-CA verification without client certificate when None).
    Raises EtcdConfigError for TLS files with a plain URL, or for another scheme.
    """
    first = servers.split(",")[0].strip()
    url = urlparse(first if "://" in first else f"http://{first}")
    host, port = url.hostname or "127.0.0.1", url.port or DEFAULT_PORT
    has_files = tls is not None and any((tls.cafile, tls.certfile, tls.keyfile))
    if url.scheme == "https":
        return EtcdEndpoint(host, port, tls or EtcdTLS())
    if url.scheme != "http":
        raise EtcdConfigError(f"--etcd-servers: {first!r}: the scheme must be http or https")
    if has_files:
        raise EtcdConfigError(f"--etcd-cafile/--etcd-certfile/--etcd-keyfile need an https:// --etcd-servers URL, "
                              f"not {first}")
    return EtcdEndpoint(host, port)


class SecureClient(aetcd.Client):
    """``aetcd.Client`` over a TLS gRPC channel (``credentials``); no etcd user/password auth.

    :meth:`connect` does what aetcd 1.0's does, with ``grpc.aio.secure_channel``.  The
    handshake happens at the first call; a refused one surfaces as aetcd's
    ``ConnectionFailedError`` (gRPC UNAVAILABLE).
    """

    def __init__(self, host: str, port: int, credentials: grpc.ChannelCredentials,
                 timeout: float | None = None) -> None:
        super().__init__(host=host, port=port, timeout=timeout, options=dict(CHANNEL_OPTIONS))
        self._credentials = credentials

    async def connect(self) -> None:
        if self._connected.is_set():
            return
        self.channel = rpc.secure_channel(f"{self._host}:{self._port}", self._credentials,
                                          options=self._options.items())
        self.kvstub = rpc.KVStub(self.channel)
        self.clusterstub = rpc.ClusterStub(self.channel)
        self.leasestub = rpc.LeaseStub(self.channel)
        self.maintenancestub = rpc.MaintenanceStub(self.channel)
        self._watcher = watcher.Watcher(rpc.WatchStub(self.channel), timeout=self._timeout, metadata=self.metadata)
        self._connected.set()


#: gRPC channel options: accept responses of any size, as kube-apiserver's etcd client does
#: (``MaxCallRecvMsgSize`` math.MaxInt32).  gRPC's default of 4 MiB made an unpaginated LIST of
#: about 2,000 pods fail (RESOURCE_EXHAUSTED, a 500) and would end the one shared watch stream
#: (every watch) when etcd batches a lagging watcher's events into one larger response.
CHANNEL_OPTIONS = {"grpc.max_receive_message_length": 2**31 - 1}


def etcd_client(endpoint: EtcdEndpoint, timeout: float) -> aetcd.Client:
    """An aetcd client for ``endpoint`` (``timeout``: seconds per call).  Raises EtcdConfigError."""
    if endpoint.tls is None:
        return aetcd.Client(host=endpoint.host, port=endpoint.port, timeout=timeout, options=dict(CHANNEL_OPTIONS))
    return SecureClient(endpoint.host, endpoint.port, endpoint.tls.channel_credentials(), timeout)


class EtcdTLSRefused(Exception):
    """The TLS connection to etcd failed: untrusted server, or client certificate missing or refused."""


def check_tls(endpoint: EtcdEndpoint, timeout: float = 5.0) -> None:
    """Make one TLS connection to ``endpoint`` and ask etcd's ``/health`` (no-op for plain endpoints).

    gRPC only logs why a handshake failed, so the apiserver checks at start with Python's
    ``ssl`` for a clear reason.  With TLS 1.3 a refused client certificate shows only when
    reading, hence the request.  Raises EtcdTLSRefused (a misconfiguration: retrying will not
    help), OSError/TimeoutError when etcd is not reachable (it may come up later), and
    EtcdConfigError for unreadable files.
    """
    if endpoint.tls is None:
        return
    ctx = endpoint.tls.ssl_context()
    with socket.create_connection((endpoint.host, endpoint.port), timeout) as raw:
        try:
            with ctx.wrap_socket(raw, server_hostname=endpoint.host) as conn:
                conn.sendall(f"GET /health HTTP/1.1\r\nHost: {endpoint.host}:{endpoint.port}\r\n"
                             "Connection: close\r\n\r\n".encode())
                conn.recv(64)
        except ssl.SSLCertVerificationError as exc:
            raise EtcdTLSRefused(f"etcd's serving certificate does not verify: {exc.verify_message}") from exc
        except ssl.SSLError as exc:
            hint = "" if endpoint.tls.certfile else ", and no --etcd-certfile was given"
            raise EtcdTLSRefused(f"etcd refused the TLS connection: {exc.reason or exc}{hint}") from exc
