"""The local cluster's PKI: a cluster CA and a certificate for every component (``minik8s up``).

As kind and k3s do on one machine, ``minik8s up`` is secure by default: the apiserver serves
HTTPS and wants a client certificate of the cluster CA (it listens on every address, so pods reach
it through the ``kubernetes`` Service at the node's address), the kubelet serves HTTPS and lets only
the apiserver and cluster admins in, and every component talks to the apiserver with its own
certificate (the identities kubeadm gives them).  The user gets the admin kubeconfig.

Everything lives in ``DATA_DIR/pki`` (0700; keys 0600), EC P-256, made once and kept: a serving
certificate is made again when the addresses it must name changed (the node's IP).  The CA is
valid for 10 years, the others for 825 days.  Files: ``ca.crt``/``ca.key``; ``<name>.crt``/
``<name>.key`` for each entry of :func:`certificates`.
"""

from __future__ import annotations

import datetime as _dt
import os
from dataclasses import dataclass, field
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from minik8s import certsigning

CA_DAYS = 3650
LEAF_DAYS = 825
#: The ``kubernetes`` Service's ClusterIP in a local cluster (the first address of 10.96.0.0/16).
KUBERNETES_SERVICE_IP = "10.96.0.1"


@dataclass(frozen=True)
class Certificate:
    """One certificate: file ``name``, subject ``cn`` and ``o`` (groups), SANs, and whether it
    serves (serverAuth) and/or authenticates a client (clientAuth)."""

    name: str
    cn: str
    o: tuple[str, ...] = ()
    dns: tuple[str, ...] = ()
    ips: tuple[str, ...] = ()
    client: bool = True
    server: bool = False


@dataclass(frozen=True)
class ClusterPKI:
    """Where the files are: :meth:`crt` and :meth:`key` of a certificate by name."""

    dir: Path
    names: tuple[str, ...] = field(default_factory=tuple)

    @property
    def ca(self) -> Path:
        return self.dir / "ca.crt"

    def crt(self, name: str) -> Path:
        return self.dir / f"{name}.crt"

    def key(self, name: str) -> Path:
        return self.dir / f"{name}.key"


def certificates(node_name: str, node_ip: str, bridge_ip: str, cluster_domain: str = "cluster.local"
                 ) -> list[Certificate]:
    """The certificates of a one-node cluster (Kubernetes' and kubeadm's identities)."""
    hostnames = ("kubernetes", "kubernetes.default", "kubernetes.default.svc",
                 f"kubernetes.default.svc.{cluster_domain}", "localhost", node_name)
    return [
        Certificate("admin", "kubernetes-admin", ("system:masters",)),
        Certificate("apiserver", "kube-apiserver", dns=hostnames,
                    ips=tuple(dict.fromkeys(("127.0.0.1", KUBERNETES_SERVICE_IP, node_ip, bridge_ip))),
                    client=False, server=True),
        Certificate("apiserver-kubelet-client", "kube-apiserver-kubelet-client"),
        Certificate("scheduler", "system:kube-scheduler"),
        Certificate("controller-manager", "system:kube-controller-manager"),
        Certificate("kubelet", f"system:node:{node_name}", ("system:nodes",), dns=(node_name, "localhost"),
                    ips=tuple(dict.fromkeys((node_ip, "127.0.0.1"))), server=True),
        Certificate("proxy", "system:kube-proxy", ("system:node-proxier",)),
        Certificate("dns", "system:kube-dns"),
        Certificate("gateway", "system:minik8s-gateway"),
    ]


def _now() -> _dt.datetime:
    return _dt.datetime.now(_dt.UTC)


def _write_key(path: Path) -> ec.EllipticCurvePrivateKey:
    key = certsigning.new_key()
    certsigning.write_private(path, certsigning.key_pem(key))
    return key


def _load_key(path: Path) -> certsigning.PrivateKey:
    return certsigning.load_key(path.read_bytes())


def _sans(cert: Certificate) -> list[x509.GeneralName]:
    return certsigning.san_names(cert.dns, cert.ips)


def _current(path: Path, cert: Certificate, ca_cert: x509.Certificate) -> bool:
    """Whether the certificate at ``path`` is signed by the CA, still valid for a month, and
    names what ``cert`` must name."""
    try:
        existing = x509.load_pem_x509_certificate(path.read_bytes())
    except (OSError, ValueError):
        return False
    if existing.issuer != ca_cert.subject or existing.not_valid_after_utc < _now() + _dt.timedelta(days=30):
        return False
    try:
        have = set(existing.extensions.get_extension_for_class(x509.SubjectAlternativeName).value)
    except x509.ExtensionNotFound:
        have = set()
    return have == set(_sans(cert))


def ensure_pki(directory: Path, certs: list[Certificate], cluster_name: str = "minik8s") -> ClusterPKI:
    """Make what is missing or out of date in ``directory``; returns where the files are.
    OSError when the directory cannot be written."""
    directory.mkdir(parents=True, exist_ok=True)
    os.chmod(directory, 0o700)
    pki = ClusterPKI(directory, tuple(c.name for c in certs))
    ca_key_path = directory / "ca.key"
    if pki.ca.exists() and ca_key_path.exists():
        ca_key = _load_key(ca_key_path)
        ca_cert = x509.load_pem_x509_certificate(pki.ca.read_bytes())
    else:
        ca_key = _write_key(ca_key_path)
        subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, f"{cluster_name}-ca")])
        ca_cert = (x509.CertificateBuilder().subject_name(subject).issuer_name(subject)
                   .public_key(ca_key.public_key()).serial_number(x509.random_serial_number())
                   .not_valid_before(_now() - _dt.timedelta(minutes=5))
                   .not_valid_after(_now() + _dt.timedelta(days=CA_DAYS))
                   .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
                   .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True, crl_sign=True,
                                                content_commitment=False, key_encipherment=False,
                                                data_encipherment=False, key_agreement=False,
                                                encipher_only=False, decipher_only=False), critical=True)
                   .sign(ca_key, hashes.SHA256()))
        pki.ca.write_bytes(ca_cert.public_bytes(serialization.Encoding.PEM))
    for cert in certs:
        if _current(pki.crt(cert.name), cert, ca_cert) and pki.key(cert.name).exists():
            continue
        key = _write_key(pki.key(cert.name))
        usages = ["digital signature", "key encipherment"] + (["client auth"] if cert.client else []) + \
            (["server auth"] if cert.server else [])
        leaf = certsigning.sign(ca_cert, ca_key, key.public_key(), certsigning.subject(cert.cn, cert.o), usages,
                                _sans(cert), _now() + _dt.timedelta(days=LEAF_DAYS))
        pki.crt(cert.name).write_bytes(certsigning.cert_pem(leaf))
    return pki
