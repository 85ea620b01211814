"""The TLS flags of the apiserver and the kubelet, and the kubelet's authorization, without servers."""

from __future__ import annotations

import ssl
from pathlib import Path

import pytest

from minik8s.apiserver.etcd_client import EtcdConfigError, EtcdEndpoint, EtcdTLS, parse_etcd_servers
from minik8s.apiserver.kubelet_client import KubeletClient, kubelet_error
from minik8s.auth import Authenticator, UserInfo
from minik8s.host.errors import ConfigError
from minik8s.kubelet.authorization import KubeletAuthorizer, request_attributes
from minik8s.kubelet.config import check_serving_tls
from minik8s.serving.http import TLSInfoProtocol, tls_serving_options
from tests.support.pki import CA, KeyPair


@pytest.fixture(scope="module")
def ca(tmp_path_factory: pytest.TempPathFactory) -> CA:
    return CA(tmp_path_factory.mktemp("pki"))


@pytest.fixture(scope="module")
def serving(ca: CA) -> KeyPair:
    return ca.issue("server", "server", server=True, client=False)


# ------------------------------------------------------------------ kubelet authorization
@pytest.mark.parametrize("method, path, expected", [
    ("GET", "/stats/summary", ("get", "stats")),
    ("GET", "/healthz", ("get", "healthz")),
    ("GET", "/pods", ("get", "pods")),
    ("GET", "/containerLogs/ns/p/c", ("get", "proxy")),
    ("GET", "/exec/ns/p/c", ("get", "proxy")),
    ("POST", "/exec/ns/p/c", ("create", "proxy")),
    ("GET", "/podsx", ("get", "proxy")),
])
def test_request_attributes(method: str, path: str, expected: tuple[str, str]) -> None:
    assert request_attributes(method, path) == expected


def test_kubelet_authorizer() -> None:
    authz = KubeletAuthorizer()
    assert authz.authorize(UserInfo("kube-apiserver-kubelet-client"), "GET", "/pods") is None
    assert authz.authorize(UserInfo("admin", groups=("dev", "system:masters")), "POST", "/exec/a/b/c") is None
    assert authz.authorize(UserInfo("system:node:other", groups=("system:nodes",)), "GET", "/stats/summary") == \
        "Forbidden (user=system:node:other, verb=get, resource=nodes, subresource=stats)"
    assert authz.authorize(UserInfo("system:anonymous", groups=("system:unauthenticated",)), "GET", "/x") is not None


def test_authenticator_reads_cn_and_o_of_a_verified_certificate() -> None:
    cert = {"subject": ((("organizationName", "system:nodes"),), (("organizationName", "extra"),),
                        (("commonName", "system:node:n1"),))}
    scope = {"headers": [], "extensions": {"tls": {"client_cert": cert}}}
    assert Authenticator(client_certs=True).authenticate(scope) == UserInfo("system:node:n1",
                                                                            groups=("system:nodes", "extra"))
    assert Authenticator(client_certs=True).authenticate({"headers": []}) is None
    assert Authenticator().authenticate({"headers": []}) is not None  # off: anonymous


# ------------------------------------------------------------------ serving flags (apiserver and kubelet)
def test_tls_serving_options(ca: CA, serving: KeyPair, tmp_path: Path) -> None:
    assert tls_serving_options(None, None, None) == {}
    opts = tls_serving_options(*serving.files, str(ca.cert))
    assert opts["ssl_cert_reqs"] == ssl.CERT_OPTIONAL and opts["http"] is TLSInfoProtocol
    assert tls_serving_options(*serving.files, None)["ssl_cert_reqs"] == ssl.CERT_NONE
    with pytest.raises(ValueError, match="--client-ca-file needs --tls-cert-file"):
        tls_serving_options(None, None, str(ca.cert))
    with pytest.raises(ValueError, match="go together"):
        tls_serving_options(str(serving.cert), None, None)
    with pytest.raises(ValueError, match="--client-ca-file: cannot load"):
        tls_serving_options(*serving.files, str(tmp_path / "missing.crt"))
    with pytest.raises(ValueError, match="--tls-cert-file/--tls-private-key-file: cannot load"):
        tls_serving_options(str(ca.cert), str(serving.key), None)  # key does not match
    with pytest.raises(ConfigError, match="go together"):
        check_serving_tls(None, str(serving.key), None)


# ------------------------------------------------------------------ apiserver → kubelet
async def test_kubelet_client_scheme_and_verification(ca: CA, tmp_path: Path) -> None:
    client_pair = ca.issue("apiserver-kubelet-client", "kube-apiserver-kubelet-client")
    plain = KubeletClient()
    assert (plain.scheme, plain.ssl_context) == ("http", None)
    assert plain.url("10.0.0.1:10250", "/pods") == "http://10.0.0.1:10250/pods"
    unverified = KubeletClient(*client_pair.files)
    assert unverified.scheme == "https" and unverified.ssl_context is not None
    assert unverified.ssl_context.verify_mode == ssl.CERT_NONE and not unverified.ssl_context.check_hostname
    verified = KubeletClient(certificate_authority=str(ca.cert))
    assert verified.ssl_context is not None and verified.ssl_context.verify_mode == ssl.CERT_REQUIRED
    assert verified.ssl_context.check_hostname
    for c in (plain, unverified, verified):
        await c.aclose()
    with pytest.raises(ValueError, match="--kubelet-client-certificate and --kubelet-client-key go together"):
        KubeletClient(str(client_pair.cert))
    with pytest.raises(ValueError, match="--kubelet-certificate-authority: cannot load"):
        KubeletClient(certificate_authority=str(tmp_path / "missing.crt"))


def test_kubelet_errors_are_relayed() -> None:
    assert kubelet_error("a:1", 403, "Forbidden (user=x)").code == 403
    assert kubelet_error("a:1", 401, "Unauthorized").code == 401
    err = kubelet_error("a:1", 404, 'pods "p" not found\n')
    assert (err.code, err.message) == (400, 'pods "p" not found')


# ------------------------------------------------------------------ apiserver → etcd
def test_parse_etcd_servers(ca: CA, tmp_path: Path) -> None:
    assert parse_etcd_servers("http://127.0.0.1:2379") == EtcdEndpoint("127.0.0.1", 2379)
    assert parse_etcd_servers("127.0.0.1:12379,http://127.0.0.2:2379") == EtcdEndpoint("127.0.0.1", 12379)
    tls = EtcdTLS(str(ca.cert), "c.crt", "c.key")
    assert parse_etcd_servers("https://etcd.example:2379", tls) == EtcdEndpoint("etcd.example", 2379, tls)
    assert parse_etcd_servers("https://127.0.0.1").tls == EtcdTLS()
    assert parse_etcd_servers("https://127.0.0.1").url == "https://127.0.0.1:2379"
    assert parse_etcd_servers("http://127.0.0.1:2379", EtcdTLS()).tls is None  # no files: nothing to refuse
    with pytest.raises(EtcdConfigError, match="need an https:// --etcd-servers URL"):
        parse_etcd_servers("http://127.0.0.1:2379", tls)
    with pytest.raises(EtcdConfigError, match="scheme"):
        parse_etcd_servers("unix:///run/etcd.sock")
    with pytest.raises(EtcdConfigError, match="--etcd-certfile and --etcd-keyfile go together"):
        EtcdTLS(str(ca.cert), str(ca.cert), None).channel_credentials()
    with pytest.raises(EtcdConfigError, match="--etcd-cafile: cannot read"):
        EtcdTLS(str(tmp_path / "missing.crt")).channel_credentials()
