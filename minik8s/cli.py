"""``minik8s``: run one component, or a whole local cluster (``up`` / ``down`` / ``status``)."""

from __future__ import annotations

import typer

from minik8s import logging as mlog

app = typer.Typer(add_completion=False, no_args_is_help=True,
                  help="minik8s: a small, real Kubernetes-style container orchestrator.")


@app.callback()
def _root() -> None:
    """minik8s: a small, real Kubernetes-style container orchestrator."""


@app.command()
def apiserver(
    etcd_servers: str = typer.Option("http://127.0.0.1:2379", help="etcd client URL(s), comma-separated"),
    bind_address: str = typer.Option("127.0.0.1", help="address to listen on"),
    secure_port: int = typer.Option(6443, "--secure-port", "--port", help="port to listen on"),
    tls_cert_file: str = typer.Option(None, help="serving certificate (PEM); enables HTTPS"),
    tls_private_key_file: str = typer.Option(None, help="serving key (PEM)"),
    client_ca_file: str = typer.Option(None, help="CA that signs client certificates (enables cert auth)"),
    token_auth_file: str = typer.Option(None, help="static bearer tokens: token,user,uid[,groups]"),
    advertise_address: str = typer.Option(None, help="address advertised to clients"),
    v: bool = typer.Option(False, "-v", help="debug logging"),
) -> None:
    """Serve the Kubernetes-compatible API over etcd."""
    from minik8s.apiserver.main import run

    mlog.setup("apiserver", v)
    run(etcd_servers, bind_address, secure_port, tls_cert_file, tls_private_key_file, client_ca_file,
        token_auth_file, advertise_address)


def main() -> None:
    """Console-script entry point."""
    app()


if __name__ == "__main__":
    main()
