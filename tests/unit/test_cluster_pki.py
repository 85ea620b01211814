"""``minik8s up``'s PKI: a cluster CA, every component's certificate with kubeadm's identities,
serving certificates naming the node's addresses, files private, and kept across runs unless
the addresses they must name changed."""

from __future__ import annotations

import ipaddress
import stat
from pathlib import Path

from cryptography import x509
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from minik8s.cluster.pki import certificates, ensure_pki


def load(path: Path) -> x509.Certificate:
    return x509.load_pem_x509_certificate(path.read_bytes())


def test_certificates_identities_and_sans(tmp_path: Path) -> None:
    pki = ensure_pki(tmp_path / "pki", certificates("node-a", "192.0.2.7", "10.244.0.1"))
    ca = load(pki.ca)
    for name in ("admin", "apiserver", "apiserver-kubelet-client", "scheduler", "controller-manager", "kubelet",
                 "proxy", "dns", "gateway"):
        cert = load(pki.crt(name))
        cert.verify_directly_issued_by(ca)
        assert stat.S_IMODE(pki.key(name).stat().st_mode) == 0o600, name
    assert stat.S_IMODE(pki.dir.stat().st_mode) == 0o700
    admin = load(pki.crt("admin")).subject
    assert admin.get_attributes_for_oid(NameOID.ORGANIZATION_NAME)[0].value == "system:masters"
    kubelet = load(pki.crt("kubelet"))
    assert kubelet.subject.get_attributes_for_oid(NameOID.COMMON_NAME)[0].value == "system:node:node-a"
    usages = kubelet.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
    assert set(usages) == {ExtendedKeyUsageOID.CLIENT_AUTH, ExtendedKeyUsageOID.SERVER_AUTH}
    sans = load(pki.crt("apiserver")).extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert set(sans.get_values_for_type(x509.IPAddress)) == {
        ipaddress.ip_address(ip) for ip in ("127.0.0.1", "10.96.0.1", "192.0.2.7", "10.244.0.1")}
    assert "kubernetes.default.svc.cluster.local" in sans.get_values_for_type(x509.DNSName)


def test_kept_across_runs_and_remade_when_the_node_address_changes(tmp_path: Path) -> None:
    first = ensure_pki(tmp_path, certificates("n", "192.0.2.7", "10.244.0.1"))
    before = {name: first.crt(name).read_bytes() for name in ("apiserver", "kubelet", "admin")}
    ca = first.ca.read_bytes()
    again = ensure_pki(tmp_path, certificates("n", "192.0.2.7", "10.244.0.1"))
    assert {name: again.crt(name).read_bytes() for name in before} == before
    moved = ensure_pki(tmp_path, certificates("n", "192.0.2.99", "10.244.0.1"))
    assert moved.ca.read_bytes() == ca  # the CA stays: kubeconfigs keep working
    assert moved.crt("admin").read_bytes() == before["admin"]
    assert moved.crt("apiserver").read_bytes() != before["apiserver"]
    assert moved.crt("kubelet").read_bytes() != before["kubelet"]
    sans = load(moved.crt("apiserver")).extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert ipaddress.ip_address("192.0.2.99") in sans.get_values_for_type(x509.IPAddress)
