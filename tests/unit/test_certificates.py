"""CertificateSigningRequest: the apiserver's strategy (Kubernetes' validation messages, who may change
what), the signer's and approver's rules, the kubelet's rotation deadline and kubectl's CONDITION cell."""

from __future__ import annotations

import base64
import datetime as dt
from pathlib import Path

import pytest

from minik8s import certsigning
from minik8s.api.certificates import condition_summary
from minik8s.api.columns import csr_requested_duration
from minik8s.apiserver.strategies.certificates import CertificateSigningRequestStrategy, signer_name_errors
from minik8s.auth import REQUEST_USER, UserInfo
from minik8s.controllers.certificates import expires_in, is_self_node_client, signer_error
from minik8s.kubelet.certrotation import current_pair, rotation_deadline, write_pair

STRATEGY = CertificateSigningRequestStrategy()
KEY = certsigning.new_key()


def request(cn: str = "alice", orgs: tuple[str, ...] = (), dns: tuple[str, ...] = ()) -> str:
    return base64.b64encode(certsigning.make_csr(KEY, cn, orgs, dns)).decode()


def csr(**spec: object) -> dict[str, object]:
    body: dict[str, object] = {"request": request(), "signerName": "kubernetes.io/kube-apiserver-client",
                               "usages": ["client auth"]}
    body.update(spec)
    return {"apiVersion": "certificates.k8s.io/v1", "kind": "CertificateSigningRequest",
            "metadata": {"name": "alice"}, "spec": body}


def messages(obj: dict[str, object], old: dict[str, object] | None = None) -> list[str]:
    return [f"{path}: {msg}" for path, _value, msg in STRATEGY.validate(obj, old)]


def test_a_well_formed_request_is_valid() -> None:
    assert messages(csr(expirationSeconds=600)) == []


def test_request_must_be_a_pem_certificate_request() -> None:
    not_csr = base64.b64encode(b"-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n").decode()
    assert messages(csr(request=not_csr)) == ["spec.request: PEM block type must be CERTIFICATE REQUEST"]
    assert messages(csr(request="%%%")) == ["spec.request: PEM block type must be CERTIFICATE REQUEST"]


@pytest.mark.parametrize(("signer", "expected"), [
    ("", ["spec.signerName: Required value"]),
    ("example", ["spec.signerName: must be a fully qualified domain and path of the form "
                 "'example.com/signer-name'"]),
    ("example/signer", ["spec.signerName: should be a domain with at least two segments separated by dots"]),
    ("Example.com/signer", ['spec.signerName: validating label "Example": a lowercase RFC 1123 label must '
                            "consist of lower case alphanumeric characters or '-', and must start and end with an "
                            "alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is "
                            "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')"]),
    ("kubernetes.io/legacy-unknown", ["spec.signerName: the legacy signerName is not allowed via this API version"]),
])
def test_signer_name(signer: str, expected: list[str]) -> None:
    assert messages(csr(signerName=signer)) == expected


def test_signer_name_helper_accepts_well_known_signers() -> None:
    assert signer_name_errors("kubernetes.io/kubelet-serving", "p") == []


def test_usages_required_known_and_unique() -> None:
    assert messages(csr(usages=[])) == ["spec.usages: Required value"]
    bad = messages(csr(usages=["client auth", "client auth", "flying"]))
    assert bad[0] == 'spec.usages[1]: Duplicate value: "client auth"'
    assert bad[1].startswith('spec.usages[2]: Unsupported value: "flying": supported values: "any", "cert sign",')


def test_expiration_seconds_at_least_ten_minutes() -> None:
    assert messages(csr(expirationSeconds=599)) == [
        "spec.expirationSeconds: may not specify a duration less than 600 seconds (10 minutes)"]


def test_create_sets_the_requester_and_drops_the_status() -> None:
    obj = csr(username="root", groups=["system:masters"])
    obj["status"] = {"conditions": [{"type": "Approved", "status": "True"}]}
    token = REQUEST_USER.set(UserInfo("bob", "u-1", ("dev", "system:authenticated")))
    try:
        STRATEGY.prepare_for_create(obj)
    finally:
        REQUEST_USER.reset(token)
    spec = obj["spec"]
    assert isinstance(spec, dict)
    assert (spec["username"], spec["uid"], spec["groups"]) == ("bob", "u-1", ["dev", "system:authenticated"])
    assert obj["status"] == {}


def test_approved_and_denied_are_exclusive_and_true_only() -> None:
    obj = csr()
    obj["status"] = {"conditions": [{"type": "Approved", "status": "True"}, {"type": "Denied", "status": "False"}]}
    found = messages(obj)
    assert 'status.conditions[1].status: Unsupported value: "False": supported values: "True"' in found
    assert any(m.endswith("Approved and Denied conditions are mutually exclusive") for m in found)


def test_status_updates_keep_the_approval_and_approval_updates_keep_the_certificate() -> None:
    old = csr()
    old["status"] = {}
    new = csr()
    new["status"] = {"conditions": [{"type": "Approved", "status": "True"}], "certificate": "Zm9v"}
    STRATEGY.prepare_for_status_update(new, old)
    assert "conditions" not in new["status"] and new["status"]["certificate"] == "Zm9v"  # type: ignore[index]
    new = csr()
    new["status"] = {"conditions": [{"type": "Approved", "status": "True"}], "certificate": "Zm9v"}
    STRATEGY.prepare_for_subresource_update("approval", new, old)
    status = new["status"]
    assert isinstance(status, dict) and "certificate" not in status
    assert status["conditions"][0]["type"] == "Approved" and status["conditions"][0]["lastUpdateTime"]


def test_updates_may_not_remove_a_decision_or_change_the_certificate() -> None:
    old = csr()
    old["status"] = {"conditions": [{"type": "Denied", "status": "True"}]}
    assert messages(csr(), old) == ['status.conditions: Forbidden: updates may not remove a condition of type "Denied"']


def test_status_certificate_must_be_pem_certificates() -> None:
    obj = csr()
    obj["status"] = {"certificate": base64.b64encode(b"hello").decode()}
    assert messages(obj) == ["status.certificate: must contain at least one CERTIFICATE PEM block"]


def test_kubelet_client_signer_rules() -> None:
    node_req = certsigning.parse_csr(certsigning.make_csr(KEY, "system:node:n1", ["system:nodes"]))
    assert signer_error("kubernetes.io/kube-apiserver-client-kubelet", node_req, ["digital signature", "client auth"]) \
        == ""
    assert signer_error("kubernetes.io/kube-apiserver-client-kubelet", node_req, ["server auth"]) != ""
    other = certsigning.parse_csr(certsigning.make_csr(KEY, "alice"))
    assert signer_error("kubernetes.io/kube-apiserver-client-kubelet", other, ["client auth"]) == \
        "subject organization is not system:nodes"
    serving = certsigning.parse_csr(certsigning.make_csr(KEY, "system:node:n1", ["system:nodes"], ["n1"]))
    assert signer_error("kubernetes.io/kubelet-serving", serving, ["server auth", "digital signature"]) == ""


def test_only_a_nodes_own_client_request_is_auto_approved() -> None:
    own = csr(request=request("system:node:n1", ("system:nodes",)), usages=["digital signature", "client auth"],
              signerName="kubernetes.io/kube-apiserver-client-kubelet", username="system:node:n1",
              groups=["system:nodes", "system:authenticated"])
    assert is_self_node_client(own)
    other = dict(own, spec=dict(own["spec"], username="system:node:n2"))  # type: ignore[arg-type]
    assert not is_self_node_client(other)


def test_cleaner_deadlines() -> None:
    at = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
    pending = {"metadata": {"creationTimestamp": "2026-01-01T00:00:00Z"}}
    assert expires_in(pending, at) == 24 * 3600
    denied = dict(pending, status={"conditions": [{"type": "Denied", "status": "True",
                                                   "lastUpdateTime": "2025-12-31T23:30:00Z"}]})
    assert expires_in(denied, at) == 1800


def test_rotation_deadline_is_70_to_84_percent_of_the_lifetime() -> None:
    ca_key = certsigning.new_key()
    ca = certsigning.sign(_self_signed(ca_key), ca_key, ca_key.public_key(), certsigning.subject("ca"), [], [],
                          certsigning.now() + dt.timedelta(days=2), ca=True)
    cert = certsigning.sign(ca, ca_key, KEY.public_key(), certsigning.subject("n"), ["client auth"], [],
                            certsigning.now() + dt.timedelta(hours=1))
    life = cert.not_valid_after_utc - cert.not_valid_before_utc
    assert rotation_deadline(cert, 0.0) == cert.not_valid_before_utc + life * 0.7
    assert rotation_deadline(cert, 1.0) == cert.not_valid_before_utc + life * 0.84


def test_rotated_pair_is_written_and_linked(tmp_path: Path) -> None:
    ca_key = certsigning.new_key()
    ca = _self_signed(ca_key)
    cert = certsigning.sign(ca, ca_key, KEY.public_key(), certsigning.subject("n"), ["client auth"], [],
                            certsigning.now() + dt.timedelta(hours=1))
    path = write_pair(tmp_path, certsigning.cert_pem(cert), certsigning.key_pem(KEY), certsigning.now())
    assert path.is_symlink() and current_pair(tmp_path) == path
    assert path.stat().st_mode & 0o777 == 0o600


def test_condition_cell_and_requested_duration() -> None:
    obj = csr(expirationSeconds=3600)
    assert (condition_summary(obj), csr_requested_duration(obj)) == ("Pending", "60m")
    obj["status"] = {"conditions": [{"type": "Approved"}, {"type": "Failed"}], "certificate": "x"}
    assert condition_summary(obj) == "Approved,Failed,Issued"
    assert csr_requested_duration(csr()) == "<none>"


def _self_signed(key: certsigning.PrivateKey) -> object:
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes
    name = certsigning.subject("test-ca")
    now = certsigning.now()
    return (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(1).not_valid_before(now - dt.timedelta(hours=1)).not_valid_after(now + dt.timedelta(days=3))
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .sign(key, hashes.SHA256()))


def test_an_rsa_ca_signs(tmp_path: Path) -> None:
    """The appliance's CA key is RSA (the pki role's default): it loads and signs an EC request."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import rsa
    from cryptography.x509.oid import NameOID

    ca_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "rsa-ca")])
    start = certsigning.now()
    ca_cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(ca_key.public_key())
               .serial_number(1).not_valid_before(start).not_valid_after(start + dt.timedelta(days=1))
               .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
               .sign(ca_key, hashes.SHA256()))
    pem = ca_key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.TraditionalOpenSSL,
                               serialization.NoEncryption())
    loaded = certsigning.load_key(pem)
    leaf_key = certsigning.new_key()
    leaf = certsigning.sign(ca_cert, loaded, leaf_key.public_key(), certsigning.subject("bob", ["dev"]),
                            ["client auth"], [], start + dt.timedelta(hours=1))
    certsigning.verify_issued_by(leaf, ca_cert)
    with pytest.raises(ValueError):
        certsigning.load_key(b"-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n")
