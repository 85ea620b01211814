"""CertificateSigningRequests: kube-controller-manager's ``csrsigning``, ``csrapproving`` and ``csrcleaner``
(``pkg/controller/certificates``).

- signing: an approved request of ``kubernetes.io/kube-apiserver-client``,
  ``kubernetes.io/kube-apiserver-client-kubelet`` or ``kubernetes.io/kubelet-serving`` is signed with the
  cluster CA (``--cluster-signing-cert-file``/``--cluster-signing-key-file``), valid for the request's
  ``expirationSeconds`` capped by ``--cluster-signing-duration``, and ``status.certificate`` is set through
  ``/status``; a request the signer's rules refuse gets a ``Failed`` condition (``SignerValidationFailure``):
  kubelet client certificates are ``O=system:nodes, CN=system:node:<name>`` with no SANs and the usages
  ``client auth`` (+ ``digital signature``, ``key encipherment``); kubelet serving ones the same names with
  DNS or IP SANs and ``server auth``; apiserver client ones any subject with client usages;
- approving: a ``kube-apiserver-client-kubelet`` request a node makes for itself (the requester is
  ``system:node:<name>`` of the group ``system:nodes`` and the request's CN is its own name) is approved
  through ``/approval`` with reason ``AutoApproved`` (Kubernetes' ``selfnodeclient`` recognizer; minik8s
  decides on the requester's identity where Kubernetes asks a SubjectAccessReview);
- cleaning: denied and failed requests go an hour after their condition, approved ones an hour after
  approval, pending ones after 24 hours, and any whose certificate expired (each request is requeued for
  the moment it expires, no polling).
"""

from __future__ import annotations

import base64
import datetime as dt
from dataclasses import dataclass

from cryptography import x509
from cryptography.x509.oid import NameOID

from minik8s import certsigning
from minik8s.api import errors
from minik8s.api.base import Obj, parse_time
from minik8s.api.certificates import (
    APPROVED,
    CSR_API_VERSION,
    DENIED,
    FAILED,
    KUBE_APISERVER_CLIENT,
    KUBE_APISERVER_CLIENT_KUBELET,
    KUBELET_SERVING,
    condition_time,
    conditions_of,
    has_condition,
    spec_of,
)
from minik8s.client.factory import SharedInformerFactory
from minik8s.client.rest import Client
from minik8s.controllers.base import Controller
from minik8s.controllers.ownerrefs import meta_of

SIGNERS = (KUBE_APISERVER_CLIENT, KUBE_APISERVER_CLIENT_KUBELET, KUBELET_SERVING)
#: ``--cluster-signing-duration``'s default: a year.
DEFAULT_SIGNING_DURATION = 365 * 24 * 3600.0
NODE_USER_PREFIX = "system:node:"
NODES_GROUP = "system:nodes"
#: csrcleaner's deadlines (seconds).
APPROVED_EXPIRATION = 3600.0
DENIED_EXPIRATION = 3600.0
PENDING_EXPIRATION = 24 * 3600.0


@dataclass(frozen=True)
class SigningCA:
    """The CA the signer issues with: its certificate and key as PEM, and the longest validity (seconds)."""

    cert_pem: bytes
    key_pem: bytes
    max_duration: float = DEFAULT_SIGNING_DURATION

    def __post_init__(self) -> None:
        """ValueError when the certificate or the key cannot be read (an EC or RSA key)."""
        certsigning.load_cert(self.cert_pem)
        certsigning.load_key(self.key_pem)


def _names(csr: x509.CertificateSigningRequest) -> tuple[str, list[str]]:
    cn = [a.value for a in csr.subject.get_attributes_for_oid(NameOID.COMMON_NAME)]
    return (str(cn[0]) if cn else ""), certsigning.organizations(csr.subject)


def signer_error(signer: str, req: x509.CertificateSigningRequest, usages: list[str]) -> str:
    """Why the signer refuses the request (``""``: it signs): Kubernetes' ``IsKubeletClientCSR``,
    ``IsKubeletServingCSR`` and the apiserver-client usage rules."""
    cn, orgs = _names(req)
    sans = certsigning.csr_sans(req)
    if signer in (KUBE_APISERVER_CLIENT_KUBELET, KUBELET_SERVING):
        if orgs != [NODES_GROUP]:
            return f"subject organization is not {NODES_GROUP}"
        if not cn.startswith(NODE_USER_PREFIX):
            return f'subject common name does not begin with "{NODE_USER_PREFIX}"'
    if signer == KUBE_APISERVER_CLIENT_KUBELET:
        if sans:
            return "DNS, URI, Email, and IP subjectAltNames are not allowed"
        if "client auth" not in usages or set(usages) - {"client auth", "digital signature", "key encipherment"}:
            return f"usages did not match {sorted({'client auth', 'digital signature', 'key encipherment'})}"
    elif signer == KUBELET_SERVING:
        if not any(isinstance(n, x509.DNSName | x509.IPAddress) for n in sans):
            return "DNS or IP subjectAltName is required"
        if any(not isinstance(n, x509.DNSName | x509.IPAddress) for n in sans):
            return "Email and URI subjectAltNames are not allowed"
        if "server auth" not in usages or set(usages) - {"server auth", "digital signature", "key encipherment"}:
            return f"usages did not match {sorted({'server auth', 'digital signature', 'key encipherment'})}"
    elif set(usages) - {"client auth", "digital signature", "key encipherment"} or "client auth" not in usages:
        return "invalid usage for client certificate"
    return ""


def _request(csr: Obj) -> x509.CertificateSigningRequest | None:
    try:
        return certsigning.parse_csr(base64.b64decode(str(spec_of(csr).get("request") or "")))
    except ValueError:
        return None


class CSRController(Controller):
    """What the three share: an informer of CertificateSigningRequests whose adds and updates queue
    their names (``watch`` False: built without the handler, the signer without a CA)."""

    def __init__(self, client: Client, factory: SharedInformerFactory, watch: bool = True) -> None:
        super().__init__(client, factory)
        self.rt = client.kind(CSR_API_VERSION, "CertificateSigningRequest")
        self.csrs = factory.informer(self.rt)
        if watch:
            self.csrs.add_handler(self._on_csr, lambda _old, cur: self._on_csr(cur), None)

    def _on_csr(self, csr: Obj) -> None:
        self.enqueue(str(meta_of(csr).get("name") or ""))


class CSRSigningController(CSRController):
    """``csrsigning``: issues the approved requests of :data:`SIGNERS` (module docstring)."""

    name = "csrsigning"

    def __init__(self, client: Client, factory: SharedInformerFactory, ca: SigningCA | None) -> None:
        super().__init__(client, factory, watch=ca is not None)
        self.ca = ca
        if ca is not None:
            self.ca_cert = certsigning.load_cert(ca.cert_pem)
            self.ca_key = certsigning.load_key(ca.key_pem)

    async def sync(self, key: str) -> None:
        csr = self.csrs.get(key)
        if csr is None or self.ca is None:
            return
        spec = spec_of(csr)
        signer = str(spec.get("signerName") or "")
        if signer not in SIGNERS or not has_condition(csr, APPROVED) or has_condition(csr, FAILED) \
                or (csr.get("status") or {}).get("certificate"):
            return
        req = _request(csr)
        usages = [str(u) for u in spec.get("usages") or []]
        error = "unable to parse csr" if req is None else signer_error(signer, req, usages)
        status = dict(csr.get("status") or {})
        if error or req is None:
            status["conditions"] = conditions_of(csr) + [{
                "type": FAILED, "status": "True", "reason": "SignerValidationFailure", "message": error}]
            self.log.info("csrsigning: %s refused: %s", key, error)
        else:
            ttl = self.ca.max_duration
            if isinstance(spec.get("expirationSeconds"), int):
                ttl = min(ttl, float(spec["expirationSeconds"]))
            cert = certsigning.sign(self.ca_cert, self.ca_key, req.public_key(), req.subject, usages,
                                    certsigning.csr_sans(req), certsigning.now() + dt.timedelta(seconds=ttl))
            status["certificate"] = base64.b64encode(certsigning.cert_pem(cert)).decode()
            self.log.info("csrsigning: signed %s for %s (%s)", key, req.subject.rfc4514_string(), signer)
        try:
            await self.client.update(self.rt, dict(csr, status=status), subresource="status")
        except errors.NotFound:
            pass


def is_self_node_client(csr: Obj) -> bool:
    """A ``kube-apiserver-client-kubelet`` request a node makes for its own name (``selfnodeclient``)."""
    spec = spec_of(csr)
    if spec.get("signerName") != KUBE_APISERVER_CLIENT_KUBELET:
        return False
    user = str(spec.get("username") or "")
    if not user.startswith(NODE_USER_PREFIX) or NODES_GROUP not in (spec.get("groups") or []):
        return False
    req = _request(csr)
    if req is None:
        return False
    cn, _orgs = _names(req)
    return cn == user and not signer_error(KUBE_APISERVER_CLIENT_KUBELET, req,
                                           [str(u) for u in spec.get("usages") or []])


class CSRApprovingController(CSRController):
    """``csrapproving``: approves the kubelet client requests nodes make for themselves."""

    name = "csrapproving"

    async def sync(self, key: str) -> None:
        csr = self.csrs.get(key)
        if csr is None or has_condition(csr, APPROVED) or has_condition(csr, DENIED) \
                or (csr.get("status") or {}).get("certificate") or not is_self_node_client(csr):
            return
        status = dict(csr.get("status") or {})
        status["conditions"] = conditions_of(csr) + [{
            "type": APPROVED, "status": "True", "reason": "AutoApproved",
            "message": "Auto approving self kubelet client certificate after SubjectAccessReview."}]
        try:
            await self.client.update(self.rt, dict(csr, status=status), subresource="approval")
            self.log.info("csrapproving: approved %s", key)
        except errors.NotFound:
            pass


def expires_in(csr: Obj, at: dt.datetime) -> float:
    """Seconds until csrcleaner deletes ``csr`` (<= 0: now)."""
    deadlines: list[dt.datetime] = []
    cert = (csr.get("status") or {}).get("certificate")
    if cert:
        try:
            deadlines.append(certsigning.load_cert(base64.b64decode(cert)).not_valid_after_utc)
        except ValueError:
            pass
    for cond in conditions_of(csr):
        when = condition_time(cond)
        if when is not None and cond.get("type") in (APPROVED, DENIED, FAILED):
            limit = APPROVED_EXPIRATION if cond.get("type") == APPROVED else DENIED_EXPIRATION
            deadlines.append(when + dt.timedelta(seconds=limit))
    if not any(c.get("type") in (APPROVED, DENIED) for c in conditions_of(csr)):
        created = parse_time(meta_of(csr).get("creationTimestamp"))
        if created is not None:
            deadlines.append(created + dt.timedelta(seconds=PENDING_EXPIRATION))
    if not deadlines:
        return PENDING_EXPIRATION
    return (min(deadlines) - at).total_seconds()


class CSRCleanerController(CSRController):
    """``csrcleaner``: deletes the requests whose time is up (module docstring)."""

    name = "csrcleaner"

    async def sync(self, key: str) -> None:
        csr = self.csrs.get(key)
        if csr is None:
            return
        remaining = expires_in(csr, certsigning.now())
        if remaining > 0:
            self.enqueue_after(key, remaining)
            return
        try:
            await self.client.delete(self.rt, key)
            self.log.info("csrcleaner: deleted %s", key)
        except errors.NotFound:
            pass
