"""The ``CertificateApproval`` and ``CertificateSigning`` admission plugins (kube-apiserver's, on by default).

Deciding a CertificateSigningRequest is the signer's business: an update through ``/approval`` needs the
``approve`` verb, and a ``/status`` update that changes ``status.certificate`` the ``sign`` verb, on the
resource ``signers`` (group ``certificates.k8s.io``) named after the request's ``spec.signerName`` or
its domain's wildcard (``kubernetes.io/*``), as ``certificates.IsAuthorizedForSignerName`` asks the
authorizer.  Otherwise 403 ``certificatesigningrequests.certificates.k8s.io "NAME" is forbidden: user not
permitted to approve requests with signerName "SIGNER"``.  Without an authorizer (``AlwaysAllow``)
every user may.  ``CertificateSubjectRestriction``: a request for ``kubernetes.io/kube-apiserver-client``
may not name the group ``system:masters`` (403 ``use of kubernetes.io/kube-apiserver-client signer with
system:masters group is not allowed``).
"""

from __future__ import annotations

import base64
from collections.abc import Callable

from minik8s import certsigning
from minik8s.api import errors
from minik8s.api.base import Obj
from minik8s.apiserver.requestinfo import RequestInfo
from minik8s.auth import REQUEST_USER, UserInfo

Decide = Callable[[UserInfo, RequestInfo], tuple[bool, str]]
GROUP = "certificates.k8s.io"


def may(decide: Decide, user: UserInfo, verb: str, signer: str) -> bool:
    """``IsAuthorizedForSignerName``: ``verb`` on ``signers/<signer>``, else on ``signers/<domain>/*``."""
    for name in (signer, signer.split("/")[0] + "/*"):
        info = RequestInfo(verb=verb, resource_request=True, api_group=GROUP, api_version="*", resource="signers",
                           name=name)
        if decide(user, info)[0]:
            return True
    return False


def admit(decide: Decide | None, subresource: str | None, obj: Obj, old: Obj) -> None:
    """Raise 403 when the request's user may not approve (``approval``) or sign (``status`` changing the
    certificate) for the request's signer."""
    user = REQUEST_USER.get()
    if decide is None or user is None:
        return
    if subresource == "approval":
        verb, action = "approve", "approve"
    elif subresource == "status" and (obj.get("status") or {}).get("certificate") != \
            (old.get("status") or {}).get("certificate"):
        verb, action = "sign", "sign"
    else:
        return
    signer = str((old.get("spec") or {}).get("signerName") or "")
    if not may(decide, user, verb, signer):
        name = (old.get("metadata") or {}).get("name") or ""
        raise errors.Forbidden(f'certificatesigningrequests.{GROUP} "{name}" is forbidden: user not permitted to '
                               f'{action} requests with signerName "{signer}"',
                               {"name": name, "group": GROUP, "kind": "certificatesigningrequests"})


def restrict_subject(obj: Obj) -> None:
    """``CertificateSubjectRestriction`` on create (see the module docstring)."""
    spec = obj.get("spec") or {}
    if spec.get("signerName") != "kubernetes.io/kube-apiserver-client":
        return
    name = (obj.get("metadata") or {}).get("name") or ""
    details = {"name": name, "group": GROUP, "kind": "certificatesigningrequests"}
    prefix = f'certificatesigningrequests.{GROUP} "{name}" is forbidden: '
    try:
        request = certsigning.parse_csr(base64.b64decode(str(spec.get("request") or "")))
    except ValueError as exc:
        raise errors.Forbidden(f"{prefix}failed to parse CSR: {exc}", details) from None
    if "system:masters" in certsigning.organizations(request.subject):
        raise errors.Forbidden(f"{prefix}use of kubernetes.io/kube-apiserver-client signer with system:masters "
                               "group is not allowed", details)
