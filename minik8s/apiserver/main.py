"""``minik8s apiserver``: serve the API over etcd (flags named like kube-apiserver's)."""

from __future__ import annotations

import logging

import typer
import uvicorn

from minik8s import logs
from minik8s.apiserver.admission import AdmissionConfig, parse_plugins
from minik8s.apiserver.app import create_app
from minik8s.apiserver.authorization import parse_modes
from minik8s.apiserver.defaulttolerationseconds import DEFAULT_SECONDS, DefaultTolerationSeconds
from minik8s.apiserver.encryption import EncryptionConfig
from minik8s.apiserver.etcd_client import EtcdConfigError, EtcdTLS, EtcdTLSRefused, check_tls, parse_etcd_servers
from minik8s.apiserver.kubelet_client import KubeletClient
from minik8s.apiserver.serviceaccounts import DEFAULT_ISSUER, TokenIssuer
from minik8s.apiserver.storage import Store
from minik8s.auth import Authenticator, load_token_file
from minik8s.serving.http import server_config, tls_serving_options

log = logging.getLogger("apiserver")


def run(
    etcd_servers: str = "http://127.0.0.1:2379",
    bind_address: str = "127.0.0.1",
    port: int = 6443,
    tls_cert_file: str | None = None,
    tls_private_key_file: str | None = None,
    client_ca_file: str | None = None,
    token_auth_file: str | None = None,
    advertise_address: str | None = None,
    service_cluster_ip_range: str = "10.96.0.0/16",
    service_node_port_range: str = "30000-32767",
    metrics_resolution: float = 15.0,
    etcd_tls: EtcdTLS | None = None,
    kubelet_client_certificate: str | None = None,
    kubelet_client_key: str | None = None,
    kubelet_certificate_authority: str | None = None,
    max_mutating_requests_inflight: int = 4,
    service_account_signing_key_file: str | None = None,
    service_account_issuer: str = DEFAULT_ISSUER,
    api_audiences: list[str] | None = None,
    authorization_mode: str = "AlwaysAllow",
    enable_admission_plugins: str | None = None,
    disable_admission_plugins: str | None = None,
    default_not_ready_toleration_seconds: int = DEFAULT_SECONDS,
    default_unreachable_toleration_seconds: int = DEFAULT_SECONDS,
    encryption_provider_config: str | None = None,
    endpoint_reconciler_type: str = "lease",
    endpoint_reconciler_ttl: float = 15.0,
    endpoint_reconciler_interval: float = 10.0,
    watch_cache: bool = True,
    default_watch_cache_size: int | None = None,
) -> None:
    """Run the apiserver until interrupted.

    Serves HTTPS when ``tls_cert_file`` and ``tls_private_key_file`` are given, else
    plain HTTP (keep that on loopback).  ``client_ca_file`` (needs TLS) and
    ``token_auth_file`` turn on authentication: then every request must carry a
    valid client certificate or bearer token, or it gets 401.  ``etcd_tls`` holds
    ``--etcd-cafile/--etcd-certfile/--etcd-keyfile`` for an ``https://`` etcd URL; the
    ``kubelet_*`` files make it reach kubelets over https/wss
    (:mod:`minik8s.apiserver.kubelet_client`).  ``service_account_signing_key_file`` (a PEM RSA or
    EC P-256 private key) enables service-account tokens (TokenRequest, TokenReview) issued as
    ``service_account_issuer`` for ``api_audiences`` (default: the issuer).  ``authorization_mode``:
    ``AlwaysAllow`` or a comma list of ``Node`` and ``RBAC`` (:mod:`minik8s.apiserver.authorization`);
    with RBAC, service-account tokens are accepted as credentials.  ``enable_admission_plugins`` /
    ``disable_admission_plugins``: comma-separated mutating admission plugins turned on (``ServiceAccount``)
    or off (``DefaultTolerationSeconds`` is on by default, :mod:`minik8s.apiserver.admission`);
    ``default_*_toleration_seconds``: the ``tolerationSeconds`` (seconds) of the not-ready and unreachable
    NoExecute tolerations ``DefaultTolerationSeconds`` adds (:mod:`minik8s.apiserver.defaulttolerationseconds`).
    ``encryption_provider_config``: an ``EncryptionConfiguration`` file; the resources it lists are
    encrypted at rest in etcd (:mod:`minik8s.apiserver.encryption`).  ``watch_cache`` and
    ``default_watch_cache_size`` (0 turns the cache off, as kube-apiserver; None: sized dynamically):
    :mod:`minik8s.apiserver.cacher`.

    Exits (SystemExit, one log line) for unusable flags or files, and when etcd refuses
    the TLS connection at start; an etcd that is not reachable yet is only reported (then
    ``/readyz`` says so until it is).
    """
    try:
        endpoint = parse_etcd_servers(etcd_servers, etcd_tls)
        encryption = EncryptionConfig.load(encryption_provider_config) if encryption_provider_config else None
        store = Store(endpoint.host, endpoint.port, tls=endpoint.tls, encryption=encryption)
        serving = tls_serving_options(tls_cert_file, tls_private_key_file, client_ca_file)
        kubelet = KubeletClient(kubelet_client_certificate, kubelet_client_key, kubelet_certificate_authority)
        tokens = load_token_file(token_auth_file) if token_auth_file else {}
        issuer = TokenIssuer.from_file(service_account_signing_key_file, service_account_issuer, api_audiences) \
            if service_account_signing_key_file else None
        modes = parse_modes(authorization_mode)
        plugins = parse_plugins(enable_admission_plugins, disable_admission_plugins)
    except (ValueError, OSError) as exc:
        log.error("apiserver cannot start: %s", exc)
        raise SystemExit(1) from exc
    try:
        check_tls(endpoint)
    except EtcdTLSRefused as exc:
        log.error("apiserver cannot use etcd at %s: %s (check --etcd-cafile, --etcd-certfile, --etcd-keyfile)",
                  endpoint.url, exc)
        raise SystemExit(1) from exc
    except EtcdConfigError as exc:
        log.error("apiserver cannot start: %s", exc)
        raise SystemExit(1) from exc
    except OSError as exc:
        log.warning("apiserver etcd at %s is not reachable yet: %s", endpoint.url, exc)
    auth = Authenticator(tokens, client_certs=bool(client_ca_file))
    scheme = "https" if serving else "http"
    low, _, high = service_node_port_range.partition("-")
    app = create_app(store, authenticator=auth, server_address=f"{advertise_address or bind_address}:{port}",
                     service_cidr=service_cluster_ip_range, node_port_range=(int(low), int(high or low)),
                     metrics_resolution=metrics_resolution, kubelet_client=kubelet,
                     max_mutating_inflight=max_mutating_requests_inflight, token_issuer=issuer,
                     authorization_modes=modes,
                     admission=AdmissionConfig(plugins, DefaultTolerationSeconds(
                         default_not_ready_toleration_seconds, default_unreachable_toleration_seconds)),
                     endpoint_reconciler_type=endpoint_reconciler_type, endpoint_reconciler_ttl=endpoint_reconciler_ttl,
                     endpoint_reconciler_interval=endpoint_reconciler_interval,
                     watch_cache=watch_cache and default_watch_cache_size != 0,
                     watch_cache_size=default_watch_cache_size)
    log.info("apiserver listening on %s://%s:%d (etcd %s, auth %s, authorization %s, kubelets over %s, "
             "service-account tokens %s, encryption at rest %s)", scheme, bind_address, port, endpoint.url,
             "on" if auth.enabled else "off", ",".join(modes), kubelet.scheme,
             f"issued as {issuer.issuer}" if issuer else "off",
             encryption.describe() if encryption else "off")
    config = server_config(app, bind_address, port, serving, timeout_keep_alive=30, timeout_graceful_shutdown=2)
    uvicorn.Server(config).run()


def command(
    etcd_servers: str = typer.Option("http://127.0.0.1:2379", help="etcd client URL(s), comma-separated "
                                                                   "(https:// for TLS; the first is used)"),
    etcd_cafile: str = typer.Option(None, help="CA that signs etcd's serving certificate (PEM; https etcd only)"),
    etcd_certfile: str = typer.Option(None, help="client certificate for etcd (PEM; https etcd only)"),
    etcd_keyfile: str = typer.Option(None, help="key of --etcd-certfile (PEM)"),
    bind_address: str = typer.Option("127.0.0.1", help="address to listen on"),
    secure_port: int = typer.Option(6443, "--secure-port", "--port", help="port to listen on"),
    tls_cert_file: str = typer.Option(None, help="serving certificate (PEM); enables HTTPS"),
    tls_private_key_file: str = typer.Option(None, help="serving key (PEM)"),
    client_ca_file: str = typer.Option(None, help="CA that signs client certificates (enables cert auth)"),
    token_auth_file: str = typer.Option(None, help="static bearer tokens: token,user,uid[,groups]"),
    kubelet_client_certificate: str = typer.Option(None, help="client certificate presented to kubelets (PEM); "
                                                              "kubelets are then reached over https"),
    kubelet_client_key: str = typer.Option(None, help="key of --kubelet-client-certificate (PEM)"),
    kubelet_certificate_authority: str = typer.Option(None, help="CA to verify the kubelets' serving certificates "
                                                                 "(PEM; without it they are not verified)"),
    advertise_address: str = typer.Option(None, help="address advertised to clients"),
    service_cluster_ip_range: str = typer.Option("10.96.0.0/16", help="CIDR ClusterIPs are allocated from"),
    service_node_port_range: str = typer.Option("30000-32767", help="range nodePorts are allocated from"),
    metrics_resolution: str = typer.Option("15s", help="how often the metrics API reads the kubelets' stats "
                                                       "(a duration: 15s, 2s; 0 turns it off)"),
    max_mutating_requests_inflight: int = typer.Option(
        4, min=1, help="writes processed at once; more wait their turn (bodies received first), so that "
                       "writes cannot starve reads"),
    service_account_signing_key_file: str = typer.Option(
        None, help="private key (PEM, RSA or EC P-256) that signs service-account tokens; enables the "
                   "TokenRequest (serviceaccounts/NAME/token) and TokenReview APIs"),
    service_account_issuer: str = typer.Option(DEFAULT_ISSUER, help="the tokens' issuer (iss claim)"),
    api_audiences: str = typer.Option(None, help="comma-separated audiences of tokens that name none "
                                                 "(default: the issuer)"),
    authorization_mode: str = typer.Option(
        "AlwaysAllow", help="AlwaysAllow, or a comma list of Node and RBAC (asked in order); with RBAC, "
                            "service-account tokens are accepted as bearer credentials"),
    enable_admission_plugins: str = typer.Option(
        None, help="mutating admission plugins, comma-separated: ServiceAccount (default service account, "
                   "the kube-api-access token volume in every pod) and DefaultTolerationSeconds (on by default)"),
    disable_admission_plugins: str = typer.Option(
        None, help="admission plugins turned off, comma-separated: DefaultTolerationSeconds"),
    default_not_ready_toleration_seconds: int = typer.Option(
        DEFAULT_SECONDS, min=0,
        help="tolerationSeconds of the node.kubernetes.io/not-ready:NoExecute toleration added to every pod "
             "that does not already have such a toleration (DefaultTolerationSeconds)"),
    default_unreachable_toleration_seconds: int = typer.Option(
        DEFAULT_SECONDS, min=0,
        help="tolerationSeconds of the node.kubernetes.io/unreachable:NoExecute toleration added to every pod "
             "that does not already have such a toleration (DefaultTolerationSeconds)"),
    encryption_provider_config: str = typer.Option(
        None, help="EncryptionConfiguration file (apiserver.config.k8s.io/v1): the resources it lists "
                   "(secrets, ...) are encrypted in etcd with its first provider (aesgcm, secretbox or "
                   "identity); every listed key is tried on read"),
    endpoint_reconciler_type: str = typer.Option(
        "lease", help="lease: the default/kubernetes Endpoints list the apiservers whose leases are live "
                      "(several apiservers over one etcd); none: not kept"),
    endpoint_reconciler_ttl: str = typer.Option(
        "15s", help="time to live of this apiserver's endpoint lease (kube-apiserver's fixed 15s; duration)"),
    endpoint_reconciler_interval: str = typer.Option(
        "10s", help="how often the endpoint lease is renewed and the Endpoints rewritten (kube-apiserver's "
                    "fixed 10s; duration)"),
    watch_cache: bool = typer.Option(True, "--watch-cache/--no-watch-cache",
                                     help="serve watches and resourceVersion=0 lists from a cache fed by one etcd "
                                          "watch per resource"),
    default_watch_cache_size: int = typer.Option(
        None, min=0, help="events each resource's watch-cache window keeps (0 turns the cache off; default: "
                          "at least 100, and those of the last 75 s up to 102400)"),
    v: bool = typer.Option(False, "-v", help="debug logging"),
) -> None:
    """Serve the Kubernetes-compatible API over etcd."""
    from minik8s.api.durations import parse_duration

    try:
        resolution = parse_duration(metrics_resolution)
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="--metrics-resolution") from exc
    if endpoint_reconciler_type not in ("lease", "none"):
        raise typer.BadParameter("must be lease or none", param_hint="--endpoint-reconciler-type")
    try:
        reconciler_ttl, reconciler_interval = (parse_duration(endpoint_reconciler_ttl),
                                               parse_duration(endpoint_reconciler_interval))
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="--endpoint-reconciler-ttl/-interval") from exc
    if not 0 < reconciler_interval < reconciler_ttl:
        raise typer.BadParameter("the interval must be above 0 and below the TTL",
                                 param_hint="--endpoint-reconciler-ttl/-interval")
    logs.setup("apiserver", v)
    run(etcd_servers, bind_address, secure_port, tls_cert_file, tls_private_key_file, client_ca_file,
        token_auth_file, advertise_address, service_cluster_ip_range, service_node_port_range, resolution,
        EtcdTLS(etcd_cafile, etcd_certfile, etcd_keyfile),
        kubelet_client_certificate, kubelet_client_key, kubelet_certificate_authority,
        max_mutating_requests_inflight, service_account_signing_key_file, service_account_issuer,
        [a.strip() for a in api_audiences.split(",") if a.strip()] if api_audiences else None, authorization_mode,
        enable_admission_plugins, disable_admission_plugins, default_not_ready_toleration_seconds,
        default_unreachable_toleration_seconds, encryption_provider_config, endpoint_reconciler_type, reconciler_ttl,
        reconciler_interval, watch_cache, default_watch_cache_size)
