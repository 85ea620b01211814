"""``minik8s proxy``: kube-proxy for minik8s (flags named like kube-proxy's)."""

from __future__ import annotations

import typer


def command(
    kubeconfig: str = typer.Option(None, help="kubeconfig file (default: $KUBECONFIG, ~/.kube/config, "
                                              "~/.minik8s/kubeconfig)"),
    context: str = typer.Option(None, help="kubeconfig context to use"),
    proxy_mode: str = typer.Option("iptables", help="iptables, ipvs, or auto (IPVS where the kernel has it)"),
    cluster_cidr: str = typer.Option("10.244.0.0/16", help="pod network; ClusterIP traffic from outside it is "
                                                           "masqueraded"),
    service_cluster_ip_range: str = typer.Option("10.96.0.0/16", help="ClusterIP range (routed to a local "
                                                                      "port-less bridge)"),
    node_ip: str = typer.Option(None, help="this node's IP (default: the default route's source address)"),
    chain_prefix: str = typer.Option("KUBE", help="prefix of every chain (and of the mark bit and link names), "
                                                  "to run isolated instances side by side"),
    iptables_localhost_nodeports: bool = typer.Option(
        True, "--iptables-localhost-nodeports/--no-iptables-localhost-nodeports",
        help="NodePorts answer on 127.0.0.1 too (iptables mode; sets net.ipv4.conf.all.route_localnet=1)"),
    hostname_override: str = typer.Option(None, help="this node's name: endpoints on it are local (traffic "
                                                     "policy Local; default: the host name) and NetworkPolicies "
                                                     "are enforced for its pods (default: for every pod, "
                                                     "wherever its traffic crosses this host)"),
    nodeport_addresses: str = typer.Option("", help="comma-separated IPv4 CIDRs (or 'primary': --node-ip): "
                                                    "NodePorts and health check node ports answer only on the "
                                                    "local addresses in them (default: every address)"),
    network_policy: bool = typer.Option(True, "--network-policy/--no-network-policy",
                                        help="enforce networking.k8s.io/v1 NetworkPolicies in the filter table"),
    sync_period: float = typer.Option(30.0, help="seconds between full resyncs"),
    min_sync_period: float = typer.Option(0.1, help="at least this many seconds between two syncs"),
    cleanup: bool = typer.Option(False, "--cleanup", help="remove every chain, jump, IPVS service and the "
                                                          "service CIDR route of this prefix, then exit"),
    v: bool = typer.Option(False, "-v", help="debug logging"),
) -> None:
    """Program Service ClusterIPs and NodePorts (iptables DNAT chains or IPVS) from Services and Endpoints,
    and enforce NetworkPolicies."""
    import asyncio
    import logging
    import signal

    from minik8s import logs
    from minik8s.client.kubeconfig import KubeconfigError
    from minik8s.client.rest import Client
    from minik8s.host.addresses import default_node_name
    from minik8s.host.errors import HostError
    from minik8s.host.sysctl import ensure_sysctl
    from minik8s.proxy.config import MODES, ProxyConfig
    from minik8s.proxy.errors import ProxyError
    from minik8s.proxy.iptables import IptablesBackend, localhost_nodeports
    from minik8s.proxy.ipvs import IPVSBackend, Pyroute2Kernel, ipvs_unavailable_reason, require_ipvs
    from minik8s.proxy.netpol import PolicyBackend, PolicyEnforcer
    from minik8s.proxy.proxier import Backend, Proxier
    from minik8s.proxy.routing import ServiceRoute, default_node_ip

    logs.setup("proxy", v)
    log = logging.getLogger("proxy")

    def fail(message: str, code: int = 1) -> typer.Exit:
        typer.echo(f"minik8s proxy: {message}", err=True)
        return typer.Exit(code)

    if proxy_mode not in MODES:
        raise fail(f"--proxy-mode {proxy_mode!r}: must be one of {', '.join(MODES)}", 2)
    try:
        cfg = ProxyConfig(chain_prefix=chain_prefix, cluster_cidr=cluster_cidr,
                          service_cidr=service_cluster_ip_range, node_ip=node_ip or default_node_ip(),
                          sync_period=sync_period, min_sync_period=min_sync_period,
                          localhost_nodeports=iptables_localhost_nodeports,
                          node_name=(hostname_override or default_node_name()).strip().lower(),
                          nodeport_addresses=tuple(c.strip() for c in nodeport_addresses.split(",") if c.strip()),
                          ).validate()
    except (ProxyError, HostError) as exc:
        raise fail(str(exc), 2) from None

    if cleanup:
        try:
            removed = IptablesBackend(cfg).cleanup()
            route = ServiceRoute(cfg).remove()
            vs = 0
            if ipvs_unavailable_reason() is None:
                vs = IPVSBackend(cfg, Pyroute2Kernel(cfg)).cleanup()
        except (ProxyError, HostError) as exc:
            raise fail(f"cleanup failed: {exc}") from None
        log.info("cleanup prefix=%s chains_removed=%d route_removed=%s ipvs_removed=%d",
                 cfg.chain_prefix, removed, route, vs)
        return

    mode = proxy_mode
    if mode == "ipvs":
        try:
            require_ipvs()
        except (ProxyError, HostError) as exc:
            raise fail(str(exc)) from None
    elif mode == "auto":
        reason = ipvs_unavailable_reason()
        mode = "ipvs" if reason is None else "iptables"
        log.info("proxy-mode auto: using %s%s", mode, f" ({reason})" if reason else "")
    backend: Backend
    if mode == "ipvs":
        try:
            backend = IPVSBackend(cfg, Pyroute2Kernel(cfg))
        except ImportError:
            raise fail("IPVS mode needs pyroute2 (pip install pyroute2)") from None
    else:
        backend = IptablesBackend(cfg)
    if localhost_nodeports(cfg, mode):
        # As kube-proxy: DNAT of 127.0.0.1:<nodePort> to a pod needs loopback sources routable.
        problem = ensure_sysctl("net/ipv4/conf/all/route_localnet", "1")
        if problem:
            log.warning("localhost NodePorts will not answer: cannot set %s", problem)
    for key, want in (("net/ipv4/ip_forward", "1"), ("net/bridge/bridge-nf-call-iptables", "1")):
        try:
            with open(f"/proc/sys/{key}") as fh:
                value = fh.read().strip()
        except OSError:
            value = "missing"
        if value != want:
            log.warning("sysctl %s=%s (want %s): pod-to-Service traffic may not work", key.replace("/", "."),
                        value, want)

    async def main() -> None:
        try:
            client = Client.from_kubeconfig(kubeconfig, context)
        except KubeconfigError as exc:
            raise fail(str(exc)) from None
        async with client:
            policies = PolicyEnforcer(client, PolicyBackend(cfg, hostname_override), cfg) if network_policy else None
            proxier = Proxier(client, backend, cfg, ServiceRoute(cfg), policies)
            task = asyncio.get_running_loop().create_task(proxier.run())
            for sig in (signal.SIGINT, signal.SIGTERM):
                asyncio.get_running_loop().add_signal_handler(sig, task.cancel)
            log.info("starting mode=%s prefix=%s mark=%s cluster-cidr=%s service-cidr=%s node-ip=%s node=%s "
                     "apiserver=%s", mode, cfg.chain_prefix, cfg.mark, cfg.cluster_cidr, cfg.service_cidr,
                     cfg.node_ip, cfg.node_name, client.config.server)
            try:
                await task
            except asyncio.CancelledError:
                log.info("stopping syncs=%d failures=%d (rules left in place)", proxier.syncs, proxier.failures)

    asyncio.run(main())
