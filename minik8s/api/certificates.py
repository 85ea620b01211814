"""``certificates.k8s.io/v1`` CertificateSigningRequest: a request for a certificate from a signer.

Kubernetes' field names and meanings (``k8s.io/api/certificates/v1``)::

    apiVersion: certificates.k8s.io/v1
    kind: CertificateSigningRequest
    metadata: {name: alice}                 # cluster-scoped
    spec:
      request: <base64 of a PEM "CERTIFICATE REQUEST">   # PKCS#10, signed by the new key
      signerName: kubernetes.io/kube-apiserver-client    # who is asked to sign
      expirationSeconds: 86400              # optional, >= 600; the signer may cap it
      usages: [client auth, digital signature]
      username: ..., uid: ..., groups: [...], extra: {...}   # set by the apiserver: who asked
    status:
      conditions: [{type: Approved, status: "True", reason: ..., message: ...}]   # /approval only
      certificate: <base64 of the PEM certificate(s)>    # /status only, by the signer

The apiserver's rules are :mod:`minik8s.apiserver.strategies.certificates`; the controller-manager's
signer, approver and cleaner :mod:`minik8s.controllers.certificates`; ``kubectl certificate approve|deny``
:mod:`minik8s.kubectl.certificate`.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from pydantic import Field

from minik8s.api.base import Obj
from minik8s.api.meta import TypedObject
from minik8s.api.model import Model

CSR_API_VERSION = "certificates.k8s.io/v1"

#: The well-known signers kube-controller-manager's csrsigning controller issues for.
KUBE_APISERVER_CLIENT = "kubernetes.io/kube-apiserver-client"
KUBE_APISERVER_CLIENT_KUBELET = "kubernetes.io/kube-apiserver-client-kubelet"
KUBELET_SERVING = "kubernetes.io/kubelet-serving"
#: ``certificates.LegacyUnknownSignerName``: refused by the v1 API.
LEGACY_UNKNOWN = "kubernetes.io/legacy-unknown"

#: Condition types (``RequestConditionType``).
APPROVED = "Approved"
DENIED = "Denied"
FAILED = "Failed"

#: ``KeyUsage`` values (``allValidUsages``), in Kubernetes' sorted order (its NotSupported message).
KEY_USAGES = tuple(sorted((
    "signing", "digital signature", "content commitment", "key encipherment", "key agreement",
    "data encipherment", "cert sign", "crl sign", "encipher only", "decipher only", "any",
    "server auth", "client auth", "code signing", "email protection", "s/mime", "ipsec end system",
    "ipsec tunnel", "ipsec user", "timestamping", "ocsp signing", "microsoft sgc", "netscape sgc")))


class CertificateSigningRequestSpec(Model):
    request: str
    signer_name: str = ""
    expiration_seconds: int | None = None
    usages: list[str] | None = None
    username: str | None = None
    uid: str | None = None
    groups: list[str] | None = None
    extra: dict[str, list[str]] | None = None


class CertificateSigningRequestCondition(Model):
    type: str = ""
    status: str = ""
    reason: str | None = None
    message: str | None = None
    last_update_time: str | None = None
    last_transition_time: str | None = None


class CertificateSigningRequestStatus(Model):
    conditions: list[CertificateSigningRequestCondition] | None = None
    certificate: str | None = Field(default=None)


class CertificateSigningRequest(TypedObject):
    """``certificates.k8s.io/v1`` CertificateSigningRequest (cluster-scoped; ``status`` and ``approval``
    subresources)."""

    spec: CertificateSigningRequestSpec
    status: CertificateSigningRequestStatus | None = None


def conditions_of(csr: Obj) -> list[Obj]:
    """``status.conditions`` (``[]`` when absent or malformed)."""
    conds = (csr.get("status") or {}).get("conditions") or []
    return [c for c in conds if isinstance(c, dict)]


def has_condition(csr: Obj, type_: str) -> bool:
    """Whether a condition of ``type_`` is there with status ``True`` (``Approved`` and ``Denied`` are
    only ever ``True``)."""
    return any(c.get("type") == type_ and c.get("status") == "True" for c in conditions_of(csr))


def condition_summary(csr: Obj) -> str:
    """kubectl's CONDITION cell (``extractCSRStatus``): ``Denied``, ``Approved`` or ``Pending``, then
    ``,Failed`` and ``,Issued`` when they apply."""
    types = {c.get("type") for c in conditions_of(csr)}
    text = DENIED if DENIED in types else APPROVED if APPROVED in types else "Pending"
    if FAILED in types:
        text += ",Failed"
    if (csr.get("status") or {}).get("certificate"):
        text += ",Issued"
    return text


def condition_time(cond: Obj) -> dt.datetime | None:
    """When a condition last changed (``lastUpdateTime``, else ``lastTransitionTime``); None when neither parses."""
    for key in ("lastUpdateTime", "lastTransitionTime"):
        value = cond.get(key)
        if isinstance(value, str) and value:
            try:
                return dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
            except ValueError:
                continue
    return None


def spec_of(csr: Obj) -> dict[str, Any]:
    spec = csr.get("spec")
    return spec if isinstance(spec, dict) else {}
