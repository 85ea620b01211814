"""``minik8s apiserver``: serve the API over etcd (flags named like kube-apiserver's)."""

from __future__ import annotations

import logging
import ssl
from urllib.parse import urlparse

import typer
import uvicorn

from minik8s import logging as mlog
from minik8s.apiserver.app import create_app
from minik8s.apiserver.auth import Authenticator, TLSInfoProtocol, TLSInfoWebSocketProtocol, load_token_file
from minik8s.apiserver.storage import Store

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
) -> None:
    """Run the apiserver until interrupted.

    Serves HTTPS when ``tls_cert_file`` and ``tls_private_key_file`` are given, else
    plain HTTP (keep that on loopback).  ``client_ca_file`` (needs TLS) and
    ``token_auth_file`` turn on authentication: then every request must carry a
    valid client certificate or bearer token, or it gets 401.
    """
    first = etcd_servers.split(",")[0]
    url = urlparse(first if "://" in first else f"http://{first}")
    store = Store(url.hostname or "127.0.0.1", url.port or 2379)
    tokens = load_token_file(token_auth_file) if token_auth_file else {}
    if client_ca_file and not tls_cert_file:
        raise SystemExit("apiserver: --client-ca-file needs --tls-cert-file and --tls-private-key-file")
    auth = Authenticator(tokens, client_certs=bool(client_ca_file))
    scheme = "https" if tls_cert_file else "http"
    low, _, high = service_node_port_range.partition("-")
    app = create_app(store, authenticator=auth, server_address=f"{advertise_address or bind_address}:{port}",
                     service_cidr=service_cluster_ip_range, node_port_range=(int(low), int(high or low)),
                     metrics_resolution=metrics_resolution)
    log.info("apiserver listening on %s://%s:%d (etcd %s, auth %s)", scheme, bind_address, port, first,
             "on" if auth.enabled else "off")
    config = uvicorn.Config(
        app,
        host=bind_address,
        port=port,
        log_level="warning",
        access_log=False,
        http=TLSInfoProtocol if tls_cert_file else "httptools",
        ssl_certfile=tls_cert_file,
        ssl_keyfile=tls_private_key_file,
        ssl_ca_certs=client_ca_file,
        ssl_cert_reqs=ssl.CERT_OPTIONAL if client_ca_file else ssl.CERT_NONE,
        timeout_keep_alive=30,
        timeout_graceful_shutdown=2,
        ws=TLSInfoWebSocketProtocol if tls_cert_file else "auto",
    )
    uvicorn.Server(config).run()


def command(
    etcd_servers: str = typer.Option("http://127.0.0.1:2379", help="etcd client URL(s), comma-separated"),
    bind_address: str = typer.Option("127.0.0.1", help="address to listen on"),
    secure_port: int = typer.Option(6443, "--secure-port", "--port", help="port to listen on"),
    tls_cert_file: str = typer.Option(None, help="serving certificate (PEM); enables HTTPS"),
    tls_private_key_file: str = typer.Option(None, help="serving key (PEM)"),
    client_ca_file: str = typer.Option(None, help="CA that signs client certificates (enables cert auth)"),
    token_auth_file: str = typer.Option(None, help="static bearer tokens: token,user,uid[,groups]"),
    advertise_address: str = typer.Option(None, help="address advertised to clients"),
    service_cluster_ip_range: str = typer.Option("10.96.0.0/16", help="CIDR ClusterIPs are allocated from"),
    service_node_port_range: str = typer.Option("30000-32767", help="range nodePorts are allocated from"),
    metrics_resolution: str = typer.Option("15s", help="how often the metrics API reads the kubelets' stats "
                                                       "(a duration: 15s, 2s; 0 turns it off)"),
    v: bool = typer.Option(False, "-v", help="debug logging"),
) -> None:
    """Serve the Kubernetes-compatible API over etcd."""
    from minik8s.api.metrics import parse_duration

    try:
        resolution = parse_duration(metrics_resolution)
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="--metrics-resolution") from exc
    mlog.setup("apiserver", v)
    run(etcd_servers, bind_address, secure_port, tls_cert_file, tls_private_key_file, client_ca_file,
        token_auth_file, advertise_address, service_cluster_ip_range, service_node_port_range, resolution)
