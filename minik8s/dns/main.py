"""``minik8s dns``: the cluster DNS server (Service, pod and DNS-object names).

Pods reach it at ``--cluster-dns-ip`` (the ``kube-system/kube-dns`` Service, DNATed by
kube-proxy to the address this server registers); hosts can too, e.g.
``dig @10.96.0.10 web.default.svc.cluster.local`` or by adding ``nameserver 10.96.0.10``
to their own resolv.conf (an administrator's choice; minik8s never edits it).

Forwarding of other names is **off** by default: they are REFUSED.  ``--forward`` relays
them to the ``nameserver`` lines of ``--resolv-conf`` (or to ``--upstream``), which sends
queries off the machine — do not enable it where only local traffic is allowed.
"""

from __future__ import annotations

import typer


def command(
    kubeconfig: str = typer.Option(None, help="kubeconfig file (default: $KUBECONFIG, ~/.kube/config, "
                                              "~/.minik8s/kubeconfig)"),
    context: str = typer.Option(None, help="kubeconfig context to use"),
    bind_address: str = typer.Option("127.0.0.1", help="address to serve on; for pods, the node's pod-bridge "
                                                       "gateway (e.g. 10.244.0.1) or node IP"),
    port: int = typer.Option(53, min=0, max=65535, help="UDP and TCP port"),
    advertise_address: str = typer.Option(None, help="address written to the DNS Service's Endpoints "
                                                     "(default: --bind-address)"),
    cluster_domain: str = typer.Option("cluster.local", help="the cluster's DNS domain"),
    cluster_dns_ip: str = typer.Option("10.96.0.10", help="ClusterIP of the DNS Service (kubelet --cluster-dns)"),
    service: str = typer.Option("kube-system/kube-dns", help="namespace/name of the DNS Service"),
    register: bool = typer.Option(True, "--register/--no-register",
                                  help="create the DNS Service and keep this server in its Endpoints"),
    node_name: str = typer.Option(None, help="nodeName of this server's endpoint (default: the host name)"),
    forward: bool = typer.Option(False, "--forward", help="relay names outside the cluster to upstream "
                                                          "resolvers (off: REFUSED; sends traffic off the machine)"),
    resolv_conf: str = typer.Option("/etc/resolv.conf", help="upstream resolvers for --forward"),
    upstream: list[str] = typer.Option(None, help="upstream resolver ip[:port] for --forward (repeatable; "
                                                  "replaces --resolv-conf)"),
    ttl: int = typer.Option(5, min=0, help="TTL of answers, seconds"),
    v: bool = typer.Option(False, "-v", help="debug logging"),
) -> None:
    """Serve cluster DNS names from the API over UDP and TCP."""
    import asyncio
    import ipaddress
    import logging
    import signal
    import socket

    from minik8s import logs
    from minik8s.client.kubeconfig import KubeconfigError
    from minik8s.client.rest import Client
    from minik8s.dns.app import ClusterDNS, DNSConfig
    from minik8s.dns.server import parse_upstream, upstreams_from

    logs.setup("dns", v)
    log = logging.getLogger("dns")
    namespace, sep, name = service.partition("/")
    if not sep or not namespace or not name:
        raise typer.BadParameter("must be namespace/name", param_hint="--service")
    for flag, value in (("--bind-address", bind_address), ("--cluster-dns-ip", cluster_dns_ip),
                        ("--advertise-address", advertise_address)):
        if value is not None:
            try:
                ipaddress.ip_address(value)
            except ValueError as exc:
                raise typer.BadParameter(str(exc), param_hint=flag) from None
    if register and not advertise_address and ipaddress.ip_address(bind_address).is_unspecified:
        raise typer.BadParameter("with --bind-address 0.0.0.0 give --advertise-address", param_hint="--bind-address")
    upstreams: list[tuple[str, int]] = []
    if forward:
        try:
            upstreams = [parse_upstream(u) for u in upstream] if upstream else \
                upstreams_from(resolv_conf, {bind_address, cluster_dns_ip, advertise_address or bind_address})
        except ValueError as exc:
            raise typer.BadParameter(str(exc), param_hint="--upstream") from None
        if not upstreams:
            log.warning("dns --forward without any upstream resolver: other names get SERVFAIL")
    config = DNSConfig(bind_address=bind_address, port=port, cluster_domain=cluster_domain,
                       cluster_dns_ip=cluster_dns_ip, service_namespace=namespace, service_name=name,
                       advertise_address=advertise_address, node_name=node_name or socket.gethostname(),
                       register=register, forward=forward, upstreams=upstreams, ttl=ttl)

    async def main() -> None:
        try:
            client = Client.from_kubeconfig(kubeconfig, context)
        except KubeconfigError as exc:
            typer.echo(f"minik8s dns: {exc}", err=True)
            raise typer.Exit(1) from None
        async with client:
            stop = asyncio.Event()
            for sig in (signal.SIGINT, signal.SIGTERM):
                asyncio.get_running_loop().add_signal_handler(sig, stop.set)
            log.info("dns starting domain=%s bind=%s:%d cluster-dns-ip=%s apiserver=%s", cluster_domain,
                     bind_address, port, cluster_dns_ip, client.config.server)
            try:
                await ClusterDNS(client, config).run(stop)
            except OSError as exc:
                typer.echo(f"minik8s dns: cannot serve on {bind_address}:{port}: {exc}", err=True)
                raise typer.Exit(1) from None
            log.info("dns stopped")

    asyncio.run(main())
