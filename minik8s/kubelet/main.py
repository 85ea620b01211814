"""``minik8s kubelet``: the node agent that runs this node's pods on Docker (flags named like the kubelet's)."""

from __future__ import annotations

from pathlib import Path

import typer


def command(
    kubeconfig: str = typer.Option(None, help="kubeconfig to reach the apiserver "
                                              "(default: $KUBECONFIG, ~/.kube/config, ~/.minik8s/kubeconfig)"),
    node_name: str = typer.Option(None, help="name of the Node (default: the host name, lower-cased)"),
    node_ip: str = typer.Option(None, help="the node's InternalIP (default: the host's primary IPv4)"),
    port: int = typer.Option(10250, help="port of the kubelet's server (logs, exec, stats)"),
    address: str = typer.Option(None, help="bind address of the kubelet's server (default: --node-ip)"),
    pod_cidr: str = typer.Option(None, help="pod subnet of this node, published as the Node's spec.podCIDR when "
                                            "that is empty (the Node's wins when set); without it the kubelet "
                                            "waits for the node IPAM controller to set spec.podCIDR"),
    node_labels: str = typer.Option("", help="extra Node labels: key=value,..."),
    register_with_taints: str = typer.Option("", help="taints to register the Node with: key=value:Effect,..."),
    root_dir: Path = typer.Option(Path("/var/lib/minik8s/kubelet"), help="kubelet state (emptyDir volumes)"),
    local_path_root: Path = typer.Option(Path("/var/lib/minik8s/local-path"),
                                         help="where local-path volumes live on this node (the "
                                              "controller-manager's --local-path-root); directories of "
                                              "deleted local-path volumes of this node are removed from it"),
    crashloop_backoff_base: float = typer.Option(10.0, help="first crash-loop/image-pull back-off, seconds"),
    crashloop_backoff_max: float = typer.Option(300.0, help="largest back-off, seconds"),
    node_status_update_frequency: float = typer.Option(10.0, help="seconds between node status posts"),
    node_lease_duration_seconds: int = typer.Option(40, help="Lease duration; renewed every quarter of it"),
    sync_frequency: float = typer.Option(5.0, help="seconds between re-syncs of each pod"),
    network_name: str = typer.Option("minik8s-pods", help="Docker bridge network of the pods"),
    cluster_cidr: str = typer.Option("10.244.0.0/16", help="the whole pod network: blackholed on this host, "
                                                           "masqueraded only when leaving it"),
    service_cluster_ip_range: str = typer.Option("10.96.0.0/16", help="the ClusterIP range (never masqueraded "
                                                                      "by the kubelet)"),
    network_backend: str = typer.Option("host-gw", help="how pods reach other nodes' podCIDRs: host-gw (a route "
                                                        "via the node's InternalIP on a shared link), vxlan "
                                                        "(device minik8s.1, VNI 1, port 8472), auto (host-gw "
                                                        "where possible, else vxlan) or none"),
    network_sync_period: float = typer.Option(10.0, help="seconds between re-checks of routes and rules"),
    resolv_conf: str = typer.Option("/etc/resolv.conf", help="resolver file whose nameservers and searches pods "
                                                             "inherit (\"\" for none)"),
    cleanup_network: bool = typer.Option(False, "--cleanup-network",
                                         help="remove this cluster CIDR's routes, VXLAN device and netfilter "
                                              "rules from the host, then exit"),
    cluster_dns: str = typer.Option("", help="DNS server IP(s) for ClusterFirst pods, comma-separated"),
    cluster_domain: str = typer.Option("cluster.local", help="the cluster's DNS domain"),
    pod_infra_container_image: str = typer.Option("minik8s/pause:latest", help="the pause image"),
    image_pull_progress_deadline: float = typer.Option(
        30.0, help="cancel an image pull that made no progress for this many seconds"),
    max_pods: int = typer.Option(110, help="pods capacity of the Node"),
    tls_cert_file: str = typer.Option(None, help="serving certificate of the kubelet's server (PEM); "
                                                 "with --tls-private-key-file it serves HTTPS"),
    tls_private_key_file: str = typer.Option(None, help="key of --tls-cert-file (PEM)"),
    client_ca_file: str = typer.Option(None, help="CA that signs client certificates (PEM; needs --tls-cert-file): "
                                                  "every request must carry one (401 otherwise), and only "
                                                  "system:masters and kube-apiserver-kubelet-client are "
                                                  "allowed (403 otherwise)"),
    rotate_certificates: bool = typer.Option(
        False, "--rotate-certificates",
        help="renew the kubeconfig's client certificate before it expires, through CertificateSigningRequests "
             "of the signer kubernetes.io/kube-apiserver-client-kubelet"),
    cert_dir: Path = typer.Option(None, "--cert-dir",
                                  help="where the rotated client certificates are kept (default: <root-dir>/pki)"),
    v: bool = typer.Option(False, "-v", help="debug logging"),
) -> None:
    """Run this node's pods on Docker: register the Node, heartbeat, reconcile pods, serve logs/exec."""
    import asyncio
    import logging
    import signal

    from minik8s import logs
    from minik8s.client.kubeconfig import KubeconfigError
    from minik8s.host.addresses import default_node_ip, default_node_name
    from minik8s.host.errors import CommandFailed, ConfigError, HostError
    from minik8s.kubelet.config import (
        DEFAULT_POD_CIDR,
        KubeletConfig,
        check_backend,
        check_cidr,
        check_serving_tls,
        parse_ip_list,
        parse_node_labels,
        parse_taints,
    )
    from minik8s.kubelet.kubelet import Kubelet
    from minik8s.kubelet.runtime import RuntimeErrorBase

    logs.setup("kubelet", v)
    log = logging.getLogger("kubelet")
    try:
        cfg = KubeletConfig(
            node_name=(node_name or default_node_name()).lower(),
            node_ip=node_ip or default_node_ip(),
            kubeconfig=kubeconfig,
            port=port,
            address=address,
            pod_cidr=check_cidr(pod_cidr or DEFAULT_POD_CIDR),
            pod_cidr_explicit=pod_cidr is not None,
            node_labels=parse_node_labels(node_labels),
            register_with_taints=parse_taints(register_with_taints),
            root_dir=root_dir,
            local_path_root=local_path_root,
            crashloop_backoff_base=crashloop_backoff_base,
            crashloop_backoff_max=crashloop_backoff_max,
            node_status_update_frequency=node_status_update_frequency,
            node_lease_duration_seconds=node_lease_duration_seconds,
            sync_frequency=sync_frequency,
            network_name=network_name,
            cluster_cidr=check_cidr(cluster_cidr, "--cluster-cidr"),
            service_cidr=check_cidr(service_cluster_ip_range, "--service-cluster-ip-range"),
            network_backend=check_backend(network_backend),
            network_sync_period=network_sync_period,
            resolv_conf=resolv_conf,
            cluster_dns=parse_ip_list(cluster_dns),
            cluster_domain=cluster_domain,
            pod_infra_container_image=pod_infra_container_image,
            image_pull_progress_deadline=image_pull_progress_deadline,
            max_pods=max_pods,
            tls_cert_file=tls_cert_file,
            tls_private_key_file=tls_private_key_file,
            client_ca_file=client_ca_file,
            rotate_certificates=rotate_certificates,
            cert_dir=cert_dir or root_dir / "pki",
        )
        check_serving_tls(tls_cert_file, tls_private_key_file, client_ca_file)
    except ConfigError as exc:
        raise typer.BadParameter(str(exc)) from exc

    if cleanup_network:
        from minik8s.kubelet.network.podnetwork import PodNetworkAgent

        agent = PodNetworkAgent(cfg.node_name, cfg.node_ip, cfg.cluster_cidr, cfg.service_cidr, cfg.network_backend,
                                list)
        try:
            removed = agent.cleanup()
        except CommandFailed as exc:
            log.error("kubelet network cleanup failed: %s", exc)
            raise typer.Exit(1) from exc
        typer.echo(" ".join(f"{k}={v}" for k, v in removed.items()))
        return

    async def main() -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, stop.set)
        await Kubelet(cfg).run(stop)

    try:
        asyncio.run(main())
    except (KubeconfigError, HostError, RuntimeErrorBase) as exc:
        log.error("kubelet cannot start: %s", exc)
        raise typer.Exit(1) from exc
