"""The kubelet's client-certificate rotation (``--rotate-certificates``; client-go's ``certificate.Manager``).

The certificate the kubelet authenticates with (``system:node:<name>``, group ``system:nodes``) is
replaced before it expires: at a jittered deadline between 70% and 84% of its lifetime (Kubernetes'
``nextRotationDeadline``: ``notBefore + 0.7 * lifetime * (1 + 0.2 * rand)``), the kubelet makes a new
EC key, asks for a certificate with a CertificateSigningRequest of the signer
``kubernetes.io/kube-apiserver-client-kubelet`` (usages ``digital signature``, ``client auth``), waits
for the controller-manager to approve (``csrapproving``) and sign it (``csrsigning``), and writes the
certificate and key together as ``<cert-dir>/kubelet-client-<time>.pem``, then points the symbolic
link ``kubelet-client-current.pem`` at it (renamed into place: atomic).  The kubelet's client then
presents the new pair on its new connections (:meth:`minik8s.client.rest.Client.use_client_certificate`);
a restarted kubelet starts from ``kubelet-client-current.pem`` when it is there.  A failed attempt is
retried with back-off (Kubernetes': from 1 s, doubling, at most 5 min).
"""

from __future__ import annotations

import asyncio
import base64
import datetime as dt
import logging
import os
import random
from collections.abc import Callable
from pathlib import Path

from cryptography import x509

from minik8s import certsigning
from minik8s.api import errors
from minik8s.api.certificates import CSR_API_VERSION, DENIED, FAILED, KUBE_APISERVER_CLIENT_KUBELET, has_condition
from minik8s.client.rest import Client

log = logging.getLogger("kubelet")

CURRENT = "kubelet-client-current.pem"
USAGES = ["digital signature", "client auth"]
MAX_BACKOFF = 300.0


def rotation_deadline(cert: x509.Certificate, jitter: float) -> dt.datetime:
    """When to rotate ``cert``: ``notBefore + lifetime * 0.7 * (1 + 0.2 * jitter)``, ``jitter`` in [0, 1)."""
    start, end = cert.not_valid_before_utc, cert.not_valid_after_utc
    return start + (end - start) * (0.7 * (1 + 0.2 * jitter))


def current_pair(cert_dir: Path) -> Path | None:
    """``<cert-dir>/kubelet-client-current.pem`` when it holds a certificate and key, else None."""
    path = cert_dir / CURRENT
    try:
        data = path.read_bytes()
        certsigning.load_cert(data)
        certsigning.load_key(data)
    except (OSError, ValueError):
        return None
    return path


def write_pair(cert_dir: Path, cert_pem: bytes, key_pem: bytes, at: dt.datetime) -> Path:
    """Write ``kubelet-client-<time>.pem`` (certificate then key, 0600) and point ``kubelet-client-current.pem``
    at it atomically; returns the current path."""
    cert_dir.mkdir(parents=True, exist_ok=True)
    name = f"kubelet-client-{at.strftime('%Y-%m-%d-%H-%M-%S-%f')}.pem"
    certsigning.write_private(cert_dir / name, cert_pem + key_pem)
    link = cert_dir / (CURRENT + ".tmp")
    link.unlink(missing_ok=True)
    os.symlink(name, link)
    os.replace(link, cert_dir / CURRENT)
    return cert_dir / CURRENT


class ClientCertificateRotator:
    """Keeps ``client``'s certificate fresh for node ``node_name`` (module docstring).

    ``cert_file``: the certificate it starts with (PEM; a combined cert+key file too); ``jitter``: where
    in the 70%-84% window to rotate (a function giving [0, 1), random by default); ``poll``: seconds
    between reads of the request while waiting for its certificate."""

    def __init__(self, client: Client, node_name: str, cert_dir: Path, cert_file: str,
                 jitter: Callable[[], float] = random.random, poll: float = 0.5) -> None:
        self.client = client
        self.node_name = node_name
        self.cert_dir = cert_dir
        self.cert_file = cert_file
        self.jitter = jitter
        self.poll = poll
        self.rt = client.kind(CSR_API_VERSION, "CertificateSigningRequest")
        #: set after each successful rotation (tests wait on it)
        self.rotated = asyncio.Event()

    def current(self) -> x509.Certificate:
        return certsigning.load_cert(Path(self.cert_file).read_bytes())

    async def run(self) -> None:
        """Rotate at every deadline until cancelled."""
        backoff = 1.0
        while True:
            try:
                deadline = rotation_deadline(self.current(), self.jitter())
            except (OSError, ValueError) as exc:
                log.warning("certificate rotation: cannot read %s: %s", self.cert_file, exc)
                deadline = certsigning.now()
            wait = (deadline - certsigning.now()).total_seconds()
            if wait > 0:
                log.info("certificate rotation: next rotation in %.0fs", wait)
                await asyncio.sleep(wait)
            try:
                await self.rotate()
                backoff = 1.0
            except (errors.APIError, OSError, ValueError, TimeoutError) as exc:
                log.warning("certificate rotation failed (retrying in %.0fs): %s", backoff, exc)
                await asyncio.sleep(backoff)
                backoff = min(backoff * 2, MAX_BACKOFF)

    async def rotate(self, timeout: float = 900.0) -> Path:
        """One rotation: request, wait (up to ``timeout`` seconds: TimeoutError), write, use.  Returns the
        current pair's path.  ValueError when the request is denied or fails."""
        key = certsigning.new_key()
        request = certsigning.make_csr(key, f"system:node:{self.node_name}", ["system:nodes"])
        created = await self.client.create(self.rt, {
            "apiVersion": CSR_API_VERSION, "kind": "CertificateSigningRequest",
            "metadata": {"generateName": "csr-"},
            "spec": {"request": base64.b64encode(request).decode(), "signerName": KUBE_APISERVER_CLIENT_KUBELET,
                     "usages": USAGES}})
        name = str(created["metadata"]["name"])
        log.info("certificate rotation: waiting for CertificateSigningRequest %s", name)
        cert_pem = await self._wait_issued(name, timeout)
        path = write_pair(self.cert_dir, cert_pem, certsigning.key_pem(key), certsigning.now())
        self.client.use_client_certificate(str(path), str(path))
        self.cert_file = str(path)
        log.info("certificate rotation: now using %s (until %s)", path.resolve().name,
                 certsigning.load_cert(cert_pem).not_valid_after_utc.isoformat())
        self.rotated.set()
        return path

    async def _wait_issued(self, name: str, timeout: float) -> bytes:
        loop = asyncio.get_running_loop()
        end = loop.time() + timeout
        while True:
            csr = await self.client.get(self.rt, name)
            cert = (csr.get("status") or {}).get("certificate")
            if cert:
                return base64.b64decode(cert)
            if has_condition(csr, DENIED) or has_condition(csr, FAILED):
                raise ValueError(f"CertificateSigningRequest {name} was denied or failed")
            if loop.time() > end:
                raise TimeoutError(f"no certificate for CertificateSigningRequest {name} in {timeout:.0f}s")
            await asyncio.sleep(self.poll)
