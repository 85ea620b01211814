"""``minik8s gateway``: the serverless entry point (functions, workflows, events) on one HTTP port."""

from __future__ import annotations

import typer


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
    activation_timeout: float = typer.Option(60.0, min=1, help="seconds a call waits for a Function scaled to "
                                                               "zero to answer"),
    max_body_bytes: int = typer.Option(6 * 1024 * 1024, min=1, help="request body limit (bytes)"),
    header_timeout: float = typer.Option(10.0, min=0.1, help="seconds to receive a request head"),
    v: bool = typer.Option(False, "-v", help="debug logging"),
) -> None:
    """Call Functions (POST /functions/NS/NAME), run Workflows (POST /workflows/NS/NAME) and take
    CloudEvents for Triggers (POST /events/NS); scales Functions from zero and publishes the
    in-flight requests the function autoscaler reads (GET /metrics).  Listening off loopback
    needs --token-auth-file (exit 2 without it)."""
    import asyncio
    import ipaddress
    import logging

    from minik8s import logs
    from minik8s.auth import Authenticator, load_token_file
    from minik8s.client.kubeconfig import KubeconfigError
    from minik8s.client.rest import Client
    from minik8s.gateway.app import Gateway, GatewayConfig, create_app
    from minik8s.gateway.server import serve

    try:
        loopback = ipaddress.ip_address(bind_address).is_loopback
    except ValueError:
        loopback = bind_address == "localhost"
    authenticator = None
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
        authenticator = Authenticator(tokens)
    elif not loopback:
        # Every listener off loopback authenticates its clients.
        typer.echo(f"minik8s gateway: --bind-address {bind_address} is not a loopback address; "
                   "it needs --token-auth-file", err=True)
        raise typer.Exit(2)
    logs.setup("gateway", v)
    log = logging.getLogger("gateway")
    try:
        client = Client.from_kubeconfig(kubeconfig, context)
    except KubeconfigError as exc:
        typer.echo(f"minik8s gateway: {exc}", err=True)
        raise typer.Exit(1) from None
    gateway = Gateway(client, GatewayConfig(activation_timeout, max_body_bytes))
    server = serve(create_app(gateway, authenticator), bind_address, port, header_timeout)
    log.info("gateway listening on http://%s:%d apiserver=%s authentication=%s", bind_address, port,
             client.config.server, "bearer tokens" if authenticator else "none (loopback)")

    async def main() -> None:
        try:
            await server.serve()
        finally:
            await client.close()

    asyncio.run(main())
    if not server.started:
        typer.echo(f"minik8s gateway: cannot serve on {bind_address}:{port}", err=True)
        raise typer.Exit(1)
