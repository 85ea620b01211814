"""A throwaway X.509 PKI for tests: a CA that issues client and serving certificates (``cryptography``).

Keys are ECDSA P-256 (fast to make); certificates are valid from an hour ago for one day.
Client certificates name the user in CN and the groups in O, as Kubernetes' x509
authenticator reads them; serving certificates carry subjectAltNames (IP 127.0.0.1 and
``localhost`` by default).  Files are PEM: ``<dir>/<name>.crt`` and ``<dir>/<name>.key``.
"""

from __future__ import annotations

import datetime as dt
import ipaddress
import ssl
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID


@dataclass(frozen=True)
class KeyPair:
    """Paths of a PEM certificate and its unencrypted PEM private key."""

    cert: Path
    key: Path

    @property
    def files(self) -> tuple[str, str]:
        """``(cert, key)`` as strings, the shape ``httpx`` and ``load_cert_chain`` take."""
        return str(self.cert), str(self.key)


def _write_key(path: Path, key: ec.EllipticCurvePrivateKey) -> None:
    path.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                       serialization.NoEncryption()))
    path.chmod(0o600)


class CA:
    """A self-signed certificate authority in ``directory`` (files ``<name>.crt``/``<name>.key``)."""

    def __init__(self, directory: Path, name: str = "minik8s-test-ca") -> None:
        self.directory = directory
        directory.mkdir(parents=True, exist_ok=True)
        self._key = ec.generate_private_key(ec.SECP256R1())
        subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
        now = dt.datetime.now(dt.UTC)
        self._cert = (
            x509.CertificateBuilder()
            .subject_name(subject).issuer_name(subject)
            .public_key(self._key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - dt.timedelta(hours=1)).not_valid_after(now + dt.timedelta(days=1))
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True, crl_sign=True,
                                         content_commitment=False, key_encipherment=False,
                                         data_encipherment=False, key_agreement=False,
                                         encipher_only=False, decipher_only=False), critical=True)
            .add_extension(x509.SubjectKeyIdentifier.from_public_key(self._key.public_key()), critical=False)
            .sign(self._key, hashes.SHA256())
        )
        self.pair = KeyPair(directory / f"{name}.crt", directory / f"{name}.key")
        self.pair.cert.write_bytes(self._cert.public_bytes(serialization.Encoding.PEM))
        _write_key(self.pair.key, self._key)

    @property
    def cert(self) -> Path:
        """The CA certificate (what ``--client-ca-file``, ``--etcd-cafile`` and the like take)."""
        return self.pair.cert

    def issue(self, name: str, common_name: str, organizations: tuple[str, ...] = (), *,
              client: bool = True, server: bool = False,
              ips: tuple[str, ...] = ("127.0.0.1",), dns: tuple[str, ...] = ("localhost",)) -> KeyPair:
        """A certificate for ``common_name`` (user) in ``organizations`` (groups), written as ``name``.

        ``client``/``server`` set the extended key usages clientAuth/serverAuth; a serving
        certificate gets ``ips`` and ``dns`` as subjectAltNames.
        """
        key = ec.generate_private_key(ec.SECP256R1())
        attrs = [x509.NameAttribute(NameOID.ORGANIZATION_NAME, o) for o in organizations]
        attrs.append(x509.NameAttribute(NameOID.COMMON_NAME, common_name))
        now = dt.datetime.now(dt.UTC)
        usages = ([ExtendedKeyUsageOID.CLIENT_AUTH] if client else []) + \
                 ([ExtendedKeyUsageOID.SERVER_AUTH] if server else [])
        builder = (
            x509.CertificateBuilder()
            .subject_name(x509.Name(attrs)).issuer_name(self._cert.subject)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - dt.timedelta(hours=1)).not_valid_after(now + dt.timedelta(days=1))
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.KeyUsage(digital_signature=True, key_encipherment=False, key_cert_sign=False,
                                         crl_sign=False, content_commitment=False, data_encipherment=False,
                                         key_agreement=False, encipher_only=False, decipher_only=False),
                           critical=True)
            .add_extension(x509.ExtendedKeyUsage(usages), critical=False)
            .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(self._key.public_key()),
                           critical=False)
        )
        if server:
            names: list[x509.GeneralName] = [x509.IPAddress(ipaddress.ip_address(ip)) for ip in ips]
            names += [x509.DNSName(d) for d in dns]
            builder = builder.add_extension(x509.SubjectAlternativeName(names), critical=False)
        cert = builder.sign(self._key, hashes.SHA256())
        pair = KeyPair(self.directory / f"{name}.crt", self.directory / f"{name}.key")
        pair.cert.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
        _write_key(pair.key, key)
        return pair

    def client_context(self, pair: KeyPair | None = None) -> ssl.SSLContext:
        """A client-side SSLContext that trusts this CA and presents ``pair`` (None: no certificate)."""
        ctx = ssl.create_default_context(cafile=str(self.cert))
        if pair is not None:
            ctx.load_cert_chain(*pair.files)
        return ctx
