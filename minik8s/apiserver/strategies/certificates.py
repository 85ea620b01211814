"""certificates.k8s.io/v1 CertificateSigningRequest (``pkg/registry/certificates/certificates/strategy.go``,
``pkg/apis/certificates/validation``).

- create: ``spec.username``, ``uid``, ``groups`` (and ``extra``) are the requesting user's, whatever the
  body says; ``status`` starts empty (no pre-approved requests);
- an update of the object changes metadata only (``spec`` and ``status`` stay as stored); ``/status``
  changes the status but never the ``Approved``/``Denied`` conditions (only ``/approval`` adds them), and
  ``/approval`` changes the conditions only (``status.certificate`` is the signer's, through ``/status``);
- validation: ``spec.request`` a PEM ``CERTIFICATE REQUEST`` with a valid signature, ``usages`` required,
  known and not repeated, ``signerName`` required and ``example.com/signer-name`` shaped (not the legacy
  signer), ``expirationSeconds`` at least 600, conditions typed with a valid status (``Approved``,
  ``Denied``, ``Failed``: ``True``), ``Approved`` and ``Denied`` exclusive, ``status.certificate`` PEM
  certificates only; an update may not remove or change an ``Approved``/``Denied``/``Failed``
  condition nor change an issued certificate.
"""

from __future__ import annotations

import base64
import binascii
import copy
import json
from typing import Any

from minik8s.api import validation as v
from minik8s.api.base import now_rfc3339
from minik8s.api.certificates import APPROVED, DENIED, FAILED, KEY_USAGES, LEGACY_UNKNOWN
from minik8s.apiserver.strategies.base import REQUIRED, Cause, Obj, Strategy, unsupported
from minik8s.auth import REQUEST_USER
from minik8s.certsigning import load_cert, parse_csr

#: Conditions whose status may only be ``True``; and what the others may hold.
TRUE_ONLY = (APPROVED, DENIED, FAILED)
CONDITION_STATUSES = ("False", "True", "Unknown")
#: ``DNS1123SubdomainMaxLength`` and the signer name's bounds (``ValidateSignerName``).
_SUBDOMAIN_MAX = 253
_SIGNER_PATH_MAX = _SUBDOMAIN_MAX + 63 + 1
_SIGNER_MAX = _SUBDOMAIN_MAX + _SIGNER_PATH_MAX + 1


def path_segment_name_errors(name: str) -> list[str]:
    """``ValidateCertificateRequestName`` (``path.IsValidPathSegmentName``): any name a URL path can hold."""
    if name in (".", ".."):
        return [f"may not be '{name}'"]
    return [f"may not contain '{c}'" for c in ("/", "%") if c in name]


def signer_name_errors(signer: Any, path: str) -> list[Cause]:
    """``ValidateSignerName``: ``<domain of DNS labels, two at least>/<path of DNS subdomains>``."""
    if not isinstance(signer, str) or not signer:
        return [(path, None, REQUIRED)]
    parts = signer.split("/")
    if len(parts) != 2:
        return [(path, signer, "must be a fully qualified domain and path of the form 'example.com/signer-name'")]
    domain, rest = parts
    causes: list[Cause] = []
    if len(domain) > _SUBDOMAIN_MAX:
        causes.append((path, None, f"Too long: may not be more than {_SUBDOMAIN_MAX} bytes"))
    labels = domain.split(".")
    for label in labels:
        errs = v.dns1123_label_errors(label)
        if errs:
            causes += [(path, domain, f'validating label "{label}": {e}') for e in errs]
            break
    if len(labels) < 2:
        causes.append((path, domain, "should be a domain with at least two segments separated by dots"))
    for label in rest.split("."):
        errs = v.dns1123_subdomain_errors(label)
        if errs:
            causes += [(path, rest, f'validating label "{label}": {e}') for e in errs]
            break
    if len(rest) > _SIGNER_PATH_MAX:
        causes.append((path, None, f"Too long: may not be more than {_SIGNER_PATH_MAX} bytes"))
    if len(signer) > _SIGNER_MAX:
        causes.append((path, None, f"Too long: may not be more than {_SIGNER_MAX} bytes"))
    return causes


def decode_bytes(value: Any) -> bytes | None:
    """A ``[]byte`` field as JSON carries it (base64); None when it is not base64."""
    if not isinstance(value, str):
        return None
    try:
        return base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        return None


def certificate_error(data: bytes) -> str:
    """Why ``status.certificate`` is not one or more PEM ``CERTIFICATE`` blocks (``validateCertificate``)."""
    text = data.decode("ascii", "replace")
    blocks = 0
    while "-----BEGIN " in text:
        start = text.index("-----BEGIN ")
        kind = text[start + 11:text.find("-----", start + 11)]
        end_marker = f"-----END {kind}-----"
        end = text.find(end_marker, start)
        if end < 0:
            break
        block = text[start:end + len(end_marker)]
        if kind != "CERTIFICATE":
            return f'only CERTIFICATE PEM blocks are allowed, found "{kind}"'
        if any(":" in line for line in block.splitlines()[1:-1]):
            return "no PEM block headers are permitted"
        try:
            load_cert(block.encode())
        except ValueError as exc:
            return f"x509: malformed certificate: {exc}"
        blocks += 1
        text = text[end + len(end_marker):]
    return "" if blocks else "must contain at least one CERTIFICATE PEM block"


def _conditions(obj: Obj) -> list[Obj]:
    conds = (obj.get("status") or {}).get("conditions") or []
    return [c for c in conds if isinstance(c, dict)]


class CertificateSigningRequestStrategy(Strategy):
    """CertificateSigningRequest: as in the module docstring."""

    has_status = True
    namespace_scoped = False
    name_check = staticmethod(path_segment_name_errors)
    update_subresources = frozenset({"approval"})

    def prepare_for_create(self, obj: Obj) -> None:
        spec = obj.setdefault("spec", {})
        if isinstance(spec, dict):
            for fld in ("username", "uid", "groups", "extra"):
                spec.pop(fld, None)
            user = REQUEST_USER.get()
            if user is not None:
                spec["username"] = user.name
                if user.uid:
                    spec["uid"] = user.uid
                if user.groups:
                    spec["groups"] = list(user.groups)
        obj["status"] = {}

    def prepare_for_update(self, new: Obj, old: Obj) -> None:
        for key in ("spec", "status"):
            if key in old:
                new[key] = copy.deepcopy(old[key])
            else:
                new.pop(key, None)

    def prepare_for_status_update(self, new: Obj, old: Obj) -> None:
        super().prepare_for_status_update(new, old)
        status = new.get("status")
        if not isinstance(status, dict):
            new["status"] = status = {}
        # the Approved/Denied conditions stay as stored (preserveConditionInstances): only /approval sets them
        kept = [c for c in _conditions(old) if c.get("type") in (APPROVED, DENIED)]
        others = [c for c in _conditions(new) if c.get("type") not in (APPROVED, DENIED)]
        if kept or others:
            status["conditions"] = kept + others
        else:
            status.pop("conditions", None)
        _stamp_conditions(new, old)

    def prepare_for_subresource_update(self, subresource: str, new: Obj, old: Obj) -> None:
        """``/approval``: only ``status.conditions`` change."""
        conditions = (new.get("status") or {}).get("conditions") if isinstance(new.get("status"), dict) else None
        super().prepare_for_status_update(new, old)
        status = copy.deepcopy(old.get("status") or {})
        if conditions:
            status["conditions"] = conditions
        else:
            status.pop("conditions", None)
        new["status"] = status
        _stamp_conditions(new, old)

    def generation_changed(self, new: Obj, old: Obj) -> bool:
        return False  # the spec never changes after creation

    def validate(self, obj: Obj, old: Obj | None) -> list[Cause]:
        causes = self.validate_metadata(obj)
        spec = obj.get("spec") if isinstance(obj.get("spec"), dict) else {}
        assert isinstance(spec, dict)
        request = decode_bytes(spec.get("request"))
        if request is None:
            causes.append(("spec.request", None, "PEM block type must be CERTIFICATE REQUEST"))
        else:
            try:
                parse_csr(request)
            except ValueError as exc:
                causes.append(("spec.request", spec.get("request"), str(exc)))
        usages = spec.get("usages") or []
        if not usages:
            causes.append(("spec.usages", None, REQUIRED))
        seen: set[str] = set()
        for i, usage in enumerate(usages):
            if usage not in KEY_USAGES:
                causes.append((f"spec.usages[{i}]", None, unsupported(usage, KEY_USAGES)))
            if usage in seen:
                causes.append((f"spec.usages[{i}]", None, f"Duplicate value: {json.dumps(usage)}"))
            seen.add(usage)
        signer = spec.get("signerName")
        if signer == LEGACY_UNKNOWN:
            causes.append(("spec.signerName", signer, "the legacy signerName is not allowed via this API version"))
        else:
            causes += signer_name_errors(signer, "spec.signerName")
        expiration = spec.get("expirationSeconds")
        if isinstance(expiration, int) and expiration < 600:
            causes.append(("spec.expirationSeconds", expiration,
                           "may not specify a duration less than 600 seconds (10 minutes)"))
        causes += self._condition_errors(obj)
        cert = (obj.get("status") or {}).get("certificate")
        if cert:
            data = decode_bytes(cert)
            error = "illegal base64 data" if data is None else certificate_error(data)
            if error:
                causes.append(("status.certificate", "<certificate data>", error))
        if old is not None:
            causes += self._update_errors(obj, old)
        return causes

    @staticmethod
    def _condition_errors(obj: Obj) -> list[Cause]:
        causes: list[Cause] = []
        seen: set[str] = set()
        for i, cond in enumerate(_conditions(obj)):
            path = f"status.conditions[{i}]"
            ctype, status = cond.get("type") or "", cond.get("status") or ""
            if not ctype:
                causes.append((f"{path}.type", None, REQUIRED))
            allowed = ("True",) if ctype in TRUE_ONLY else CONDITION_STATUSES
            if not status:
                causes.append((f"{path}.status", None, REQUIRED))
            elif status not in allowed:
                causes.append((f"{path}.status", None, unsupported(status, allowed)))
            if ctype and ctype in seen:
                causes.append((f"{path}.type", None, f"Duplicate value: {json.dumps(ctype)}"))
            seen.add(ctype)
        if APPROVED in seen and DENIED in seen:
            causes.append(("status.conditions", None,
                           f"Invalid value: {json.dumps(_conditions(obj))}: "
                           f"{APPROVED} and {DENIED} conditions are mutually exclusive"))
        return causes

    @staticmethod
    def _update_errors(obj: Obj, old: Obj) -> list[Cause]:
        causes: list[Cause] = []
        for ctype in TRUE_ONLY:
            before = [c for c in _conditions(old) if c.get("type") == ctype]
            after = [c for c in _conditions(obj) if c.get("type") == ctype]
            if len(after) < len(before):
                causes.append(("status.conditions", None,
                               f'Forbidden: updates may not remove a condition of type "{ctype}"'))
            for was, now in zip(before, after, strict=False):
                if was.get("status") != now.get("status"):
                    causes.append(("status.conditions", None,
                                   f'Forbidden: updates may not modify a condition of type "{ctype}"'))
        old_cert = (old.get("status") or {}).get("certificate")
        if old_cert and (obj.get("status") or {}).get("certificate") != old_cert:
            causes.append(("status.certificate", None,
                           "Forbidden: updates may not modify existing certificate content"))
        return causes

    def fields(self, obj: Obj) -> dict[str, str]:
        """``metadata.name`` and ``spec.signerName`` (Kubernetes' field selectors of the kind)."""
        fields = super().fields(obj)
        fields["spec.signerName"] = str((obj.get("spec") or {}).get("signerName") or "")
        return fields


def _stamp_conditions(new: Obj, old: Obj) -> None:
    """``populateConditionTimestamps``: a condition without ``lastUpdateTime`` gets now; one without
    ``lastTransitionTime`` keeps the stored one of the same type and status, else now."""
    stamp = now_rfc3339()
    previous = {(c.get("type"), c.get("status")): c for c in _conditions(old)}
    for cond in _conditions(new):
        if not cond.get("lastUpdateTime"):
            cond["lastUpdateTime"] = stamp
        if not cond.get("lastTransitionTime"):
            before = previous.get((cond.get("type"), cond.get("status")))
            cond["lastTransitionTime"] = (before or {}).get("lastTransitionTime") or stamp
