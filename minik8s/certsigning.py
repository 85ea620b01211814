"""X.509 keys, certificate requests and a CA's signing (the ``cryptography`` library).

Shared by the cluster PKI (:mod:`minik8s.cluster.pki`: the CA and every component's certificate),
the controller-manager's CertificateSigningRequest signer (:mod:`minik8s.controllers.certificates`)
and the kubelet's client-certificate rotation (:mod:`minik8s.kubelet.certrotation`).  New keys are
EC P-256 as kubeadm's and the kubelet's; a CA key may also be RSA (the appliance's ``pki`` role makes
RSA keys by default); PEM throughout.
"""

from __future__ import annotations

import datetime as dt
import ipaddress
import os
from collections.abc import Iterable
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

#: How far back a new certificate's notBefore goes (clock skew between machines; Kubernetes' signer: 5 min).
BACKDATE = dt.timedelta(minutes=5)

PrivateKey = ec.EllipticCurvePrivateKey | rsa.RSAPrivateKey


def now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


def new_key() -> ec.EllipticCurvePrivateKey:
    """A new EC P-256 private key."""
    return ec.generate_private_key(ec.SECP256R1())


def key_pem(key: PrivateKey) -> bytes:
    """The key as PEM (PKCS#8, unencrypted)."""
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption())


def load_key(data: bytes) -> PrivateKey:
    """A PEM private key; ValueError when it is neither an EC nor an RSA key."""
    key = serialization.load_pem_private_key(data, password=None)
    if not isinstance(key, ec.EllipticCurvePrivateKey | rsa.RSAPrivateKey):
        raise ValueError("not an EC or RSA private key")
    return key


def write_private(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically (a 0600 file renamed over it)."""
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)
    os.replace(tmp, path)


def subject(cn: str, orgs: Iterable[str] = ()) -> x509.Name:
    """``O=<org>...,CN=<cn>`` as Kubernetes' identities are spelt (groups in O)."""
    attrs = [x509.NameAttribute(NameOID.ORGANIZATION_NAME, o) for o in orgs]
    attrs.append(x509.NameAttribute(NameOID.COMMON_NAME, cn))
    return x509.Name(attrs)


def organizations(name: x509.Name) -> list[str]:
    """The O attributes of a subject (a Kubernetes identity's groups)."""
    return [str(a.value) for a in name.get_attributes_for_oid(NameOID.ORGANIZATION_NAME)]


def make_csr(key: PrivateKey, cn: str, orgs: Iterable[str] = (), dns: Iterable[str] = (),
             ips: Iterable[str] = ()) -> bytes:
    """A PEM ``CERTIFICATE REQUEST`` for ``cn``/``orgs`` (and SANs), signed by ``key``."""
    builder = x509.CertificateSigningRequestBuilder().subject_name(subject(cn, orgs))
    sans = san_names(dns, ips)
    if sans:
        builder = builder.add_extension(x509.SubjectAlternativeName(sans), critical=False)
    return builder.sign(key, hashes.SHA256()).public_bytes(serialization.Encoding.PEM)


def parse_csr(data: bytes) -> x509.CertificateSigningRequest:
    """The first PEM block of ``data`` as a certificate request with a valid signature.
    ValueError with Kubernetes' message (``ParseCSR``, ``CheckSignature``) otherwise."""
    text = data.decode("ascii", "replace")
    begin = text.find("-----BEGIN ")
    if begin < 0 or not text[begin:].startswith("-----BEGIN CERTIFICATE REQUEST-----"):
        raise ValueError("PEM block type must be CERTIFICATE REQUEST")
    try:
        csr = x509.load_pem_x509_csr(text[begin:].encode())
    except ValueError as exc:
        raise ValueError(f"x509: malformed certificate request: {exc}") from None
    if not csr.is_signature_valid:
        raise ValueError("x509: ECDSA verification failure")
    return csr


def san_names(dns: Iterable[str] = (), ips: Iterable[str] = ()) -> list[x509.GeneralName]:
    names: list[x509.GeneralName] = [x509.DNSName(d) for d in dns]
    names += [x509.IPAddress(ipaddress.ip_address(ip)) for ip in ips]
    return names


def csr_sans(csr: x509.CertificateSigningRequest) -> list[x509.GeneralName]:
    """The request's subjectAltName entries (``[]`` without the extension)."""
    try:
        return list(csr.extensions.get_extension_for_class(x509.SubjectAlternativeName).value)
    except x509.ExtensionNotFound:
        return []


#: ``KeyUsage`` names of a CertificateSigningRequest → (key usage flag or None, extended key usage or None).
_KEY_USAGE = {"digital signature": "digital_signature", "signing": "digital_signature",
              "content commitment": "content_commitment", "key encipherment": "key_encipherment",
              "key agreement": "key_agreement", "data encipherment": "data_encipherment",
              "cert sign": "key_cert_sign", "crl sign": "crl_sign", "encipher only": "encipher_only",
              "decipher only": "decipher_only"}
_EXT_KEY_USAGE = {"client auth": ExtendedKeyUsageOID.CLIENT_AUTH, "server auth": ExtendedKeyUsageOID.SERVER_AUTH,
                  "code signing": ExtendedKeyUsageOID.CODE_SIGNING,
                  "email protection": ExtendedKeyUsageOID.EMAIL_PROTECTION,
                  "s/mime": ExtendedKeyUsageOID.EMAIL_PROTECTION,
                  "timestamping": ExtendedKeyUsageOID.TIME_STAMPING,
                  "ocsp signing": ExtendedKeyUsageOID.OCSP_SIGNING,
                  "any": ExtendedKeyUsageOID.ANY_EXTENDED_KEY_USAGE}


def sign(ca_cert: x509.Certificate, ca_key: PrivateKey, public_key: ec.EllipticCurvePublicKey | object,
         name: x509.Name, usages: Iterable[str], sans: list[x509.GeneralName], not_after: dt.datetime,
         ca: bool = False) -> x509.Certificate:
    """A certificate for ``public_key`` and ``name`` signed by the CA, valid from :data:`BACKDATE` ago
    until ``not_after`` (never past the CA's own notAfter).  ``usages``: CertificateSigningRequest key
    usage names (``digital signature``, ``client auth``, ``server auth``...)."""
    flags = {flag: False for flag in set(_KEY_USAGE.values())}
    ext_usages: list[x509.ObjectIdentifier] = []
    for usage in usages:
        if usage in _KEY_USAGE:
            flags[_KEY_USAGE[usage]] = True
        elif usage in _EXT_KEY_USAGE and _EXT_KEY_USAGE[usage] not in ext_usages:
            ext_usages.append(_EXT_KEY_USAGE[usage])
    start = now()
    builder = (x509.CertificateBuilder().subject_name(name).issuer_name(ca_cert.subject)
               .public_key(public_key).serial_number(x509.random_serial_number())  # type: ignore[arg-type]
               .not_valid_before(start - BACKDATE)
               .not_valid_after(min(not_after, ca_cert.not_valid_after_utc))
               .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True))
    if any(flags.values()):
        if not (flags["key_agreement"]):
            flags["encipher_only"] = flags["decipher_only"] = False
        builder = builder.add_extension(x509.KeyUsage(**flags), critical=True)
    if ext_usages:
        builder = builder.add_extension(x509.ExtendedKeyUsage(ext_usages), critical=False)
    if sans:
        builder = builder.add_extension(x509.SubjectAlternativeName(sans), critical=False)
    return builder.sign(ca_key, hashes.SHA256())


def cert_pem(cert: x509.Certificate) -> bytes:
    return cert.public_bytes(serialization.Encoding.PEM)


def load_cert(data: bytes) -> x509.Certificate:
    """The first PEM certificate of ``data``; ValueError when there is none."""
    return x509.load_pem_x509_certificate(data)


def verify_issued_by(cert: x509.Certificate, ca_cert: x509.Certificate) -> None:
    """Raise (``InvalidSignature``, ValueError) unless ``cert`` is signed by ``ca_cert``."""
    cert.verify_directly_issued_by(ca_cert)
