"""``kubectl describe csr``: a CertificateSigningRequest (certificates.k8s.io/v1) in kubectl's layout
(``pkg/describe``'s ``describeCertificateSigningRequest``): who asked, the signer, the requested
duration, the condition summary, and the request's subject and alternative names."""

from __future__ import annotations

import base64

from cryptography import x509
from cryptography.x509.oid import NameOID

from minik8s import certsigning
from minik8s.api import columns as cols
from minik8s.api.base import Obj
from minik8s.api.certificates import condition_summary, spec_of
from minik8s.api.resourcetypes import ResourceType
from minik8s.kubectl.describe.shared import fetch_events
from minik8s.kubectl.printing import describe_time
from minik8s.kubectl.sections import Writer, meta_of, write_events
from minik8s.kubectl.session import Session

#: The subject's multi-valued attributes kubectl lists, in its order.
SUBJECT_LISTS = (("Organization", NameOID.ORGANIZATION_NAME), ("Organizational Unit", NameOID.ORGANIZATIONAL_UNIT_NAME),
                 ("Country", NameOID.COUNTRY_NAME), ("Locality", NameOID.LOCALITY_NAME),
                 ("Province", NameOID.STATE_OR_PROVINCE_NAME), ("StreetAddress", NameOID.STREET_ADDRESS),
                 ("PostalCode", NameOID.POSTAL_CODE))


def _list(w: Writer, name: str, values: list[str]) -> None:
    """kubectl's ``printListHelper``: ``name:`` then one value a line, nothing when empty (behind an empty
    first cell, as kubectl's tabwriter aligns them with the lines around)."""
    for i, value in enumerate(values):
        w.write(0, f"\t{name + ':' if i == 0 else ''}\t{value}")


def _values(name: x509.Name, oid: x509.ObjectIdentifier) -> list[str]:
    return [str(a.value) for a in name.get_attributes_for_oid(oid)]


async def describe_csr(s: Session, rt: ResourceType, csr: Obj) -> str:
    """Name, labels, annotations, creation, requester, signer, requested duration, status, subject, SANs, events.
    An unparsable request is an error, as kubectl's."""
    meta = meta_of(csr)
    spec = spec_of(csr)
    try:
        req = certsigning.parse_csr(base64.b64decode(str(spec.get("request") or "")))
    except ValueError as exc:
        raise ValueError(f"Error parsing CSR: {exc}") from None
    w = Writer()
    w.write(0, f"Name:\t{meta.get('name', '')}")
    w.write(0, f"Labels:\t{cols.join_labels(meta.get('labels'))}")
    w.write(0, f"Annotations:\t{cols.join_labels(meta.get('annotations'))}")
    w.write(0, f"CreationTimestamp:\t{describe_time(meta.get('creationTimestamp'))}")
    w.write(0, f"Requesting User:\t{spec.get('username') or ''}")
    if spec.get("signerName"):
        w.write(0, f"Signer:\t{spec['signerName']}")
    if isinstance(spec.get("expirationSeconds"), int):
        w.write(0, f"Requested Duration:\t{cols.human_duration(spec['expirationSeconds'])}")
    w.write(0, f"Status:\t{condition_summary(csr)}")
    w.write(0, "Subject:")
    w.write(0, f"\tCommon Name:\t{''.join(_values(req.subject, NameOID.COMMON_NAME)[:1])}")
    w.write(0, f"\tSerial Number:\t{''.join(_values(req.subject, NameOID.SERIAL_NUMBER)[:1])}")
    for title, oid in SUBJECT_LISTS:
        _list(w, title, _values(req.subject, oid))
    sans = certsigning.csr_sans(req)
    if sans:
        w.write(0, "Subject Alternative Names:")
        for title, kind in (("DNS Names", x509.DNSName), ("Email Addresses", x509.RFC822Name),
                            ("URIs", x509.UniformResourceIdentifier), ("IP Addresses", x509.IPAddress)):
            _list(w, title, [str(n.value) for n in sans if isinstance(n, kind)])
    write_events(w, await fetch_events(s, csr, rt))
    return w.text()
