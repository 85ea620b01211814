"""``minik8s gateway``: the serverless entry point (functions, workflows, events) on one HTTP port."""

from __future__ import annotations

from typing import Any

import typer

from minik8s.gateway.authn import DEFAULT_AUDIENCE


def command(
    kubeconfig: str = typer.Option(None, help="kubeconfig file (default: $KUBECONFIG, ~/.kube/config, "
                                              "~/.minik8s/kubeconfig)"),
    context: str = typer.Option(None, help="kubeconfig context to use"),
    bind_address: str = typer.Option("127.0.0.1", help="address to listen on (an address other than loopback "
                                                        "needs --token-auth-file)"),
    token_auth_file: str = typer.Option(
        None, "--token-auth-file",
        help="bearer tokens that may call the gateway (the apiserver's format: token,user,uid[,\"groups\"]); "
             "with it every request but GET /healthz needs Authorization: Bearer <token>, else 401"),
    port: int = typer.Option(8081, min=1, max=65535, help="port to listen on"),
    pod_address: str = typer.Option(
        None, help="also listen on this address, same port, for pods (e.g. the pod bridge's 10.244.0.1; it may "
                   "appear later). Requests there always authenticate: a --token-auth-file token or a pod's "
                   "service-account token for --service-account-audience"),
    service_account_audience: str = typer.Option(
        DEFAULT_AUDIENCE, help="accept service-account tokens for this audience (checked with a TokenReview); "
                               "a service account may call its own namespace only. Empty: not accepted"),
    advertise_address: str = typer.Option(
        None, help="the address published in Service kube-system/minik8s-gateway's Endpoints, so pods call "
                   "http://minik8s-gateway.kube-system.svc:PORT (default: --pod-address, else a non-loopback "
                   "--bind-address; with neither nothing is published)"),
    activation_timeout: float = typer.Option(60.0, min=1, help="seconds a call waits for a Function scaled to "
                                                               "zero to answer"),
    max_body_bytes: int = typer.Option(6 * 1024 * 1024, min=1, help="request body limit (bytes)"),
    header_timeout: float = typer.Option(10.0, min=0.1, help="seconds to receive a request head"),
    v: bool = typer.Option(False, "-v", help="debug logging"),
) -> None:
    """Call Functions (POST /functions/NS/NAME), run Workflows (POST /workflows/NS/NAME) and take
    CloudEvents for Triggers (POST /events/NS); scales Functions from zero and publishes the
    in-flight requests the function autoscaler reads (GET /metrics).  Listening off loopback
    needs --token-auth-file (exit 2 without it); pods authenticate with service-account tokens
    (--pod-address, --service-account-audience) and reach the gateway at the Service
    kube-system/minik8s-gateway (--advertise-address)."""
    import asyncio
    import ipaddress
    import logging

    from minik8s import logs
    from minik8s.auth import Authenticator, load_token_file
    from minik8s.client.kubeconfig import KubeconfigError
    from minik8s.client.registration import ServiceRegistration
    from minik8s.client.rest import Client
    from minik8s.gateway.app import Gateway, GatewayConfig, create_app
    from minik8s.gateway.authn import NamespaceAuthorizer, TokenReviewer
    from minik8s.gateway.server import SERVICE_NAME, SERVICE_NAMESPACE, listen_socket, serve
    from minik8s.host.addresses import publishable

    def is_loopback(address: str) -> bool:
        try:
            return ipaddress.ip_address(address).is_loopback
        except ValueError:
            return address == "localhost"

    for flag, address in (("--pod-address", pod_address), ("--advertise-address", advertise_address)):
        try:
            if address is not None and (ipaddress.ip_address(address).is_loopback
                                        or ipaddress.ip_address(address).is_unspecified):
                raise ValueError("pods cannot reach a loopback or unspecified address")
        except ValueError as exc:
            typer.echo(f"minik8s gateway: {flag} {address}: {exc}", err=True)
            raise typer.Exit(2) from None
    loopback = is_loopback(bind_address)
    tokens = {}
    if token_auth_file:
        try:
            tokens = load_token_file(token_auth_file)
        except (OSError, ValueError) as exc:
            typer.echo(f"minik8s gateway: --token-auth-file: {exc}", err=True)
            raise typer.Exit(2) from None
        if not tokens:
            # An empty file would let everyone in (no authenticator configured).
            typer.echo(f"minik8s gateway: --token-auth-file {token_auth_file} has no tokens", err=True)
            raise typer.Exit(2)
    elif not loopback:
        # Every listener off loopback authenticates its clients.
        typer.echo(f"minik8s gateway: --bind-address {bind_address} is not a loopback address; "
                   "it needs --token-auth-file", err=True)
        raise typer.Exit(2)
    if pod_address and not (tokens or service_account_audience):
        typer.echo("minik8s gateway: --pod-address needs --token-auth-file or --service-account-audience "
                   "(requests from pods authenticate)", err=True)
        raise typer.Exit(2)
    logs.setup("gateway", v)
    log = logging.getLogger("gateway")
    try:
        client = Client.from_kubeconfig(kubeconfig, context)
    except KubeconfigError as exc:
        typer.echo(f"minik8s gateway: {exc}", err=True)
        raise typer.Exit(1) from None
    reviewer = TokenReviewer(client, service_account_audience) if service_account_audience else None
    authenticator = None
    trusted = None
    if tokens or pod_address:
        authenticator = Authenticator(tokens, reviewer=reviewer)
        if not tokens and loopback:
            # the loopback listener stays as it was without credentials; the pod listener authenticates
            def trusted(scope: dict[str, Any]) -> bool:
                server = scope.get("server") or ("", 0)
                return is_loopback(str(server[0]))
    gateway = Gateway(client, GatewayConfig(activation_timeout, max_body_bytes))
    published = advertise_address or pod_address or (None if loopback or not publishable(bind_address)
                                                      else bind_address)
    registration = ServiceRegistration(
        client, SERVICE_NAMESPACE, SERVICE_NAME, [{"name": "http", "port": port, "targetPort": port,
                                                   "protocol": "TCP"}],
        published, {"app.kubernetes.io/name": "minik8s-gateway"}, component="gateway") if published else None
    app = create_app(gateway, authenticator, NamespaceAuthorizer(), trusted, registration)
    server = serve(app, bind_address, port, header_timeout)
    try:
        sockets = [listen_socket(bind_address, port)]
        if pod_address:
            sockets.append(listen_socket(pod_address, port, freebind=True))
    except OSError as exc:
        typer.echo(f"minik8s gateway: cannot serve on port {port}: {exc}", err=True)
        raise typer.Exit(1) from None
    log.info("gateway listening on http://%s:%d%s apiserver=%s authentication=%s%s", bind_address, port,
             f" and http://{pod_address}:{port} (pods)" if pod_address else "", client.config.server,
             ", ".join(filter(None, ["bearer tokens" if tokens else "",
                                     f"service-account tokens for {service_account_audience}"
                                     if authenticator and reviewer else ""])) or "none (loopback)",
             f"; published as {SERVICE_NAMESPACE}/{SERVICE_NAME} at {published}" if published else "")

    async def main() -> None:
        try:
            await server.serve(sockets=sockets)
        finally:
            await client.close()

    asyncio.run(main())
    if not server.started:
        typer.echo(f"minik8s gateway: cannot serve on {bind_address}:{port}", err=True)
        raise typer.Exit(1)
