"""CertificateSigningRequests end to end: an HTTPS apiserver with client certificates and the Node and
RBAC authorizers, the controller-manager's csrsigning/csrapproving/csrcleaner with the test CA, both
kubectls (minik8s' and the official 1.32) approving and denying, the issued certificate verified
against the CA and used to authenticate, and the kubelet's client-certificate rotation."""

from __future__ import annotations

import asyncio
import base64
import os
import re
import sys
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import httpx
import pytest

from minik8s import certsigning
from minik8s.api import errors
from minik8s.api.base import Obj
from minik8s.client.kubeconfig import load, render
from minik8s.client.rest import Client
from minik8s.controllers.certificates import SigningCA
from minik8s.controllers.manager import ControllerOptions
from minik8s.kubelet.certrotation import ClientCertificateRotator
from minik8s.kubelet.config import KubeletConfig
from minik8s.kubelet.kubelet import Kubelet
from tests.realkubectl import find
from tests.support.controllers import controller_manager
from tests.support.kubectl_parity import run_process
from tests.support.pki import CA, KeyPair
from tests.support.processes import APIServer, Etcd, wait_http
from tests.support.waiting import wait_for

CONTROLLERS = ["csrsigning", "csrapproving", "csrcleaner"]
REVIEW = {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}


@pytest.fixture(scope="module")
def ca(tmp_path_factory: pytest.TempPathFactory) -> CA:
    return CA(tmp_path_factory.mktemp("csr-pki"))


@pytest.fixture(scope="module")
def admin(ca: CA) -> KeyPair:
    return ca.issue("admin", "kubernetes-admin", ("system:masters",))


@pytest.fixture(scope="module")
def secure(etcd: Etcd, ca: CA, admin: KeyPair, tmp_path_factory: pytest.TempPathFactory) -> Iterator[APIServer]:
    """An HTTPS apiserver that authenticates client certificates of ``ca`` and authorizes Node,RBAC."""
    serving = ca.issue("serving", "kube-apiserver", client=False, server=True)
    server = APIServer(etcd, tmp_path_factory.mktemp("csr-apiserver"), scheme="https", extra=[
        "--tls-cert-file", str(serving.cert), "--tls-private-key-file", str(serving.key),
        "--client-ca-file", str(ca.cert), "--authorization-mode", "Node,RBAC"])
    try:
        wait_http(f"{server.url}/readyz", 30, verify=ca.client_context(admin))
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module")
def admin_kubeconfig(secure: APIServer, ca: CA, admin: KeyPair, tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("csr-kubeconfig") / "admin"
    path.write_text(render(secure.url, ca_file=str(ca.cert), cert_file=str(admin.cert), key_file=str(admin.key)))
    return path


@pytest.fixture(scope="module")
def manager_kubeconfig(secure: APIServer, ca: CA, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The controller-manager's identity (its bootstrap role must let it approve and sign)."""
    pair = ca.issue("controller-manager", "system:kube-controller-manager")
    path = tmp_path_factory.mktemp("csr-kubeconfig") / "controller-manager"
    path.write_text(render(secure.url, ca_file=str(ca.cert), cert_file=str(pair.cert), key_file=str(pair.key)))
    return path


@pytest.fixture
async def client(admin_kubeconfig: Path, manager_kubeconfig: Path, ca: CA) -> AsyncIterator[Client]:
    """An admin client, with the controller-manager's CSR controllers running as
    ``system:kube-controller-manager`` (signing with ``ca``)."""
    signing = SigningCA(ca.pair.cert.read_bytes(), ca.pair.key.read_bytes())
    async with Client(load(str(admin_kubeconfig))) as c, Client(load(str(manager_kubeconfig))) as manager, \
            controller_manager(manager, None, CONTROLLERS, options=ControllerOptions(signing_ca=signing)):
        yield c


def csr_body(name: str, key: certsigning.PrivateKey, cn: str, orgs: tuple[str, ...] = (),
             signer: str = "kubernetes.io/kube-apiserver-client", **spec: object) -> Obj:
    request = base64.b64encode(certsigning.make_csr(key, cn, orgs)).decode()
    return {"apiVersion": "certificates.k8s.io/v1", "kind": "CertificateSigningRequest", "metadata": {"name": name},
            "spec": {"request": request, "signerName": signer, "usages": ["client auth", "digital signature"],
                     **spec}}


def kubectl(binary: str | None, kubeconfig: Path, *args: str) -> tuple[int, str, str]:
    """minik8s' kubectl (``binary`` None) or an official one: (exit code, stdout, stderr)."""
    argv = [sys.executable, "-m", "minik8s.kubectl"] if binary is None else [binary]
    res = run_process([*argv, "--kubeconfig", str(kubeconfig), *args], {**os.environ, "KUBECONFIG": "/nonexistent"})
    return res.code, res.out, res.err


async def issued(client: Client, name: str) -> bytes:
    rt = client.kind("certificates.k8s.io/v1", "CertificateSigningRequest")

    async def certificate() -> bytes | None:
        cert = ((await client.get(rt, name)).get("status") or {}).get("certificate")
        return base64.b64decode(cert) if cert else None

    return await wait_for(certificate, 20, what=f"the certificate of {name}")


def official() -> str:
    binary, why = find("1.32")
    if binary is None:
        pytest.skip(why)
    return str(binary)


async def test_approved_requests_are_signed_and_authenticate(client: Client, secure: APIServer, ca: CA,
                                                             admin_kubeconfig: Path, tmp_path: Path) -> None:
    """Created with another user's name in the body, the request records the admin; approved by minik8s'
    kubectl and by kubectl 1.32 (the same line), each is signed for its expirationSeconds, verifies
    against the CA and authenticates as the subject it names."""
    rt = client.kind("certificates.k8s.io/v1", "CertificateSigningRequest")
    suffix = uuid.uuid4().hex[:6]
    keys = {who: certsigning.new_key() for who in ("minik8s", "official")}
    names = {who: f"alice-{who}-{suffix}" for who in keys}
    for who, key in keys.items():
        created = await client.create(rt, csr_body(names[who], key, f"alice-{who}", ("dev",), expirationSeconds=3600,
                                                   username="root", groups=["system:masters"]))
        assert created["spec"]["username"] == "kubernetes-admin"
        assert "system:masters" in created["spec"]["groups"] and "root" not in str(created["spec"].get("uid"))
        assert created.get("status") in (None, {})
    for who, binary in (("minik8s", None), ("official", official())):
        code, out, err = kubectl(binary, admin_kubeconfig, "certificate", "approve", names[who])
        assert (code, out, err) == (0, f"certificatesigningrequest.certificates.k8s.io/{names[who]} approved\n", "")
    ca_cert = certsigning.load_cert(ca.pair.cert.read_bytes())
    for who, key in keys.items():
        pem = await issued(client, names[who])
        cert = certsigning.load_cert(pem)
        certsigning.verify_issued_by(cert, ca_cert)
        assert (cert.not_valid_after_utc - cert.not_valid_before_utc).total_seconds() == 3600 + 300
        obj = await client.get(rt, names[who])
        approved = [c for c in obj["status"]["conditions"] if c["type"] == "Approved"]
        assert approved[0]["reason"] == "KubectlApprove" and approved[0]["lastTransitionTime"]
        pair = tmp_path / f"{who}.pem"
        pair.write_bytes(pem + certsigning.key_pem(key))
        ctx = ca.client_context()
        ctx.load_cert_chain(str(pair))
        r = httpx.post(f"{secure.url}/apis/authentication.k8s.io/v1/selfsubjectreviews", json=REVIEW, verify=ctx)
        assert r.status_code == 201, r.text
        info = r.json()["status"]["userInfo"]
        assert info["username"] == f"alice-{who}" and "dev" in info["groups"]
    # the certificate is the signer's: the approval subresource cannot set it, nor /status approve
    obj = await client.get(rt, names["minik8s"])
    with pytest.raises(errors.Invalid, match="updates may not modify existing certificate content"):
        await client.update(rt, dict(obj, status=dict(obj["status"], certificate=base64.b64encode(
            certsigning.cert_pem(ca_cert)).decode())), subresource="status")


async def test_kubectl_certificate_matches_kubectl_1_32(client: Client, admin_kubeconfig: Path) -> None:
    """approve (again: no change), deny, a missing name and no name: minik8s' kubectl answers as 1.32's,
    and ``get csr`` shows the same table."""
    binary = official()
    rt = client.kind("certificates.k8s.io/v1", "CertificateSigningRequest")
    suffix = uuid.uuid4().hex[:6]
    for who in ("m", "o"):
        for verb in ("ok", "no"):
            await client.create(rt, csr_body(f"{verb}-{who}-{suffix}", certsigning.new_key(), "bob",
                                             expirationSeconds=7200))
    steps = [["certificate", "approve", "ok-{who}-" + suffix], ["certificate", "approve", "ok-{who}-" + suffix],
             ["certificate", "approve", "--force", "ok-{who}-" + suffix],
             ["certificate", "deny", "no-{who}-" + suffix], ["certificate", "approve", "nosuch-{who}"],
             ["certificate", "approve"]]
    for step in steps:
        mine = kubectl(None, admin_kubeconfig, *[a.format(who="m") for a in step])
        theirs = kubectl(binary, admin_kubeconfig, *[a.format(who="o") for a in step])
        assert mine[0] == theirs[0], (step, mine, theirs)
        assert mine[1].replace("-m", "-X") == theirs[1].replace("-o", "-X"), (step, mine, theirs)
        assert mine[2].replace("-m", "-X").splitlines()[:1] == theirs[2].replace("-o", "-X").splitlines()[:1], \
            (step, mine, theirs)
    await issued(client, f"ok-m-{suffix}")
    await issued(client, f"ok-o-{suffix}")
    names = [f"ok-m-{suffix}", f"no-m-{suffix}", f"ok-o-{suffix}", f"no-o-{suffix}"]
    mine = kubectl(None, admin_kubeconfig, "get", "csr", *names)
    theirs = kubectl(binary, admin_kubeconfig, "get", "csr", *names)

    def rows(out: str) -> list[list[str]]:  # ages may differ by a second between two runs
        return [[cell for i, cell in enumerate(line.split()) if i != 1] for line in out.splitlines()]

    assert mine[0] == theirs[0] == 0 and rows(mine[1]) == rows(theirs[1]), (mine, theirs)
    assert rows(mine[1])[1] == [f"ok-m-{suffix}", "kubernetes.io/kube-apiserver-client", "kubernetes-admin", "120m",
                                "Approved,Issued"]
    assert rows(mine[1])[2][-1] == "Denied"
    described = kubectl(None, admin_kubeconfig, "describe", "csr", f"ok-m-{suffix}")
    official_described = kubectl(binary, admin_kubeconfig, "describe", "csr", f"ok-o-{suffix}")

    def stable(out: str) -> str:  # the name and the creation second differ
        return re.sub(r"(?m)^CreationTimestamp:.*$", "", out).replace("-m-", "-X-").replace("-o-", "-X-")

    assert described[0] == official_described[0] == 0, (described, official_described)
    assert stable(described[1]) == stable(official_described[1]), (described, official_described)
    assert "Requesting User:     kubernetes-admin\n" in described[1] and "Common Name:    bob\n" in described[1]
    assert mine[1].splitlines()[0].split() == ["NAME", "AGE", "SIGNERNAME", "REQUESTOR", "REQUESTEDDURATION",
                                               "CONDITION"]


async def test_invalid_requests_are_refused_with_kubernetes_messages(client: Client) -> None:
    rt = client.kind("certificates.k8s.io/v1", "CertificateSigningRequest")
    body = csr_body("bad-" + uuid.uuid4().hex[:6], certsigning.new_key(), "x", signer="example", expirationSeconds=60)
    body["spec"]["request"] = base64.b64encode(b"not pem").decode()
    with pytest.raises(errors.Invalid) as info:
        await client.create(rt, body)
    message = str(info.value)
    assert "spec.request: Invalid value: " in message and "PEM block type must be CERTIFICATE REQUEST" in message
    assert "spec.signerName: Invalid value: \"example\": must be a fully qualified domain and path of the form " \
           "'example.com/signer-name'" in message
    assert "spec.expirationSeconds: Invalid value: 60: may not specify a duration less than 600 seconds" in message
    masters = csr_body("masters-" + uuid.uuid4().hex[:6], certsigning.new_key(), "eve", ("system:masters",))
    with pytest.raises(errors.Forbidden, match=r'certificatesigningrequests.certificates.k8s.io "masters-\w+" is '
                                               "forbidden: use of kubernetes.io/kube-apiserver-client signer with "
                                               "system:masters group is not allowed"):
        await client.create(rt, masters)


async def test_kubelet_rotates_its_client_certificate(client: Client, secure: APIServer, ca: CA,
                                                      tmp_path: Path) -> None:
    """A node whose client certificate is past its rotation deadline asks for a new one as itself; the
    request is auto-approved (AutoApproved) and signed; the new pair is written, linked as
    kubelet-client-current.pem and authenticates as the node."""
    node = "rot-" + uuid.uuid4().hex[:6]
    ca_cert = certsigning.load_cert(ca.pair.cert.read_bytes())
    ca_key = certsigning.load_key(ca.pair.key.read_bytes())
    key = certsigning.new_key()
    # five minutes back, one minute ahead: 70% of its life is already behind it
    old = certsigning.sign(ca_cert, ca_key, key.public_key(), certsigning.subject(f"system:node:{node}",
                                                                                 ["system:nodes"]),
                           ["digital signature", "client auth"], [],
                           certsigning.now() + certsigning.BACKDATE / 5)
    (tmp_path / "old.crt").write_bytes(certsigning.cert_pem(old))
    (tmp_path / "old.key").write_bytes(certsigning.key_pem(key))
    kubeconfig = tmp_path / "kubelet.conf"
    kubeconfig.write_text(render(secure.url, ca_file=str(ca.cert), cert_file=str(tmp_path / "old.crt"),
                                 key_file=str(tmp_path / "old.key")))
    async with Client(load(str(kubeconfig))) as node_client:
        rotator = ClientCertificateRotator(node_client, node, tmp_path / "pki", str(tmp_path / "old.crt"),
                                           jitter=lambda: 0.0, poll=0.1)
        task = asyncio.get_running_loop().create_task(rotator.run())
        try:
            await asyncio.wait_for(rotator.rotated.wait(), 30)
        finally:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
        current = Path(rotator.cert_file)
        assert current == tmp_path / "pki" / "kubelet-client-current.pem" and current.is_symlink()
        new = certsigning.load_cert(current.read_bytes())
        certsigning.verify_issued_by(new, ca_cert)
        assert new.subject == old.subject and new.serial_number != old.serial_number
        assert new.public_key() != old.public_key()
        rt = client.kind("certificates.k8s.io/v1", "CertificateSigningRequest")
        mine = [c for c in (await client.list(rt))["items"] if c["spec"].get("username") == f"system:node:{node}"]
        assert [c["reason"] for c in mine[0]["status"]["conditions"]] == ["AutoApproved"]
        # the client presents the new pair on its next connections; a fresh client from the pair alone too
        review = await node_client.create(client.kind("authentication.k8s.io/v1", "SelfSubjectReview"), REVIEW)
        assert review["status"]["userInfo"]["username"] == f"system:node:{node}"
    ctx = ca.client_context()
    ctx.load_cert_chain(str(current))
    r = httpx.post(f"{secure.url}/apis/authentication.k8s.io/v1/selfsubjectreviews", json=REVIEW, verify=ctx)
    assert r.status_code == 201 and r.json()["status"]["userInfo"]["username"] == f"system:node:{node}"
    # a kubelet started again with --rotate-certificates starts from the rotated pair, not the kubeconfig's
    restarted = Kubelet(KubeletConfig(node_name=node, node_ip="127.0.0.1", kubeconfig=str(kubeconfig),
                                      rotate_certificates=True, cert_dir=tmp_path / "pki"))
    try:
        assert restarted.client.config.cert_file == str(current) and restarted.rotator is not None
        assert restarted.rotator.cert_file == str(current)
    finally:
        await restarted.client.close()


async def test_approving_needs_the_approve_verb_on_the_signer(client: Client, secure: APIServer, ca: CA,
                                                              tmp_path: Path) -> None:
    """CertificateApproval: a user who may update certificatesigningrequests/approval but not ``approve``
    for the signer gets kube-apiserver's 403; with ``approve`` on ``signers`` of the signer's domain
    (``example.com/*``) the approval goes through."""
    suffix = uuid.uuid4().hex[:6]
    user, name = f"carol-{suffix}", f"carol-csr-{suffix}"
    pair = ca.issue(user, user)
    kubeconfig = tmp_path / "carol"
    kubeconfig.write_text(render(secure.url, ca_file=str(ca.cert), cert_file=str(pair.cert), key_file=str(pair.key)))
    role_rt = client.kind("rbac.authorization.k8s.io/v1", "ClusterRole")
    binding_rt = client.kind("rbac.authorization.k8s.io/v1", "ClusterRoleBinding")
    rules: list[Obj] = [{"apiGroups": ["certificates.k8s.io"], "resources": ["certificatesigningrequests"],
                         "verbs": ["get", "list"]},
                        {"apiGroups": ["certificates.k8s.io"], "resources": ["certificatesigningrequests/approval"],
                         "verbs": ["update"]}]
    role = await client.create(role_rt, {"metadata": {"name": user}, "rules": rules})
    await client.create(binding_rt, {"metadata": {"name": user}, "subjects": [
        {"kind": "User", "name": user, "apiGroup": "rbac.authorization.k8s.io"}],
        "roleRef": {"kind": "ClusterRole", "name": user, "apiGroup": "rbac.authorization.k8s.io"}})
    rt = client.kind("certificates.k8s.io/v1", "CertificateSigningRequest")
    await client.create(rt, csr_body(name, certsigning.new_key(), "x", signer="example.com/signer"))
    try:
        def refused() -> bool:
            code, out, err = kubectl(None, kubeconfig, "certificate", "approve", name)
            return code == 1 and err == (
                f'Error from server (Forbidden): certificatesigningrequests.certificates.k8s.io "{name}" is forbidden: '
                'user not permitted to approve requests with signerName "example.com/signer"\n')

        await wait_for(lambda: asyncio.to_thread(refused), 20, interval=0.5, what="the approval refused")
        rules.append({"apiGroups": ["certificates.k8s.io"], "resources": ["signers"], "verbs": ["approve"],
                      "resourceNames": ["example.com/*"]})
        await client.update(role_rt, dict(role, rules=rules))

        def approved() -> bool:
            return kubectl(None, kubeconfig, "certificate", "approve", name)[0] == 0

        await wait_for(lambda: asyncio.to_thread(approved), 20, interval=0.5, what="the approval accepted")
    finally:
        await client.delete(binding_rt, user)
        await client.delete(role_rt, user)
