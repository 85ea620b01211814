"""``minik8s controller-manager``: run the ReplicaSet, Deployment, garbage-collector, endpoints,
node IPAM, DNS, HorizontalPodAutoscaler, node lifecycle, GPUJob (Slurm over SSH), Function and
Function autoscaler controllers.

Flags are named like kube-controller-manager's (``--kubeconfig``, ``--controllers``,
``--concurrent-workers`` standing in for the per-controller ``--concurrent-*-syncs``,
``--min-resync-period``, ``--allocate-node-cidrs``, ``--cluster-cidr``,
``--node-cidr-mask-size``, ``--horizontal-pod-autoscaler-sync-period`` and the other
``--horizontal-pod-autoscaler-*`` flags, ``--node-monitor-period``, ``--node-monitor-grace-period``,
``--node-startup-grace-period``, ``--node-eviction-rate``, ``--leader-elect`` and the
``--leader-elect-*`` timings and Lease (``kube-system/kube-controller-manager``).
The default tolerations of taint-based eviction are set on the apiserver
(``--default-not-ready-toleration-seconds``, ``--default-unreachable-toleration-seconds``), as in Kubernetes.
"""

from __future__ import annotations

import typer

from minik8s.client import flags


def command(
    kubeconfig: str = typer.Option(None, help="kubeconfig file (default: $KUBECONFIG, ~/.kube/config, "
                                              "~/.minik8s/kubeconfig)"),
    context: str = typer.Option(None, help="kubeconfig context to use"),
    controllers: str = typer.Option("*", help="comma list of controllers to run: '*' for all, 'name' to "
                                              "enable, '-name' to disable (replicaset, deployment, "
                                              "garbagecollector, endpoint, nodeipam, dns, "
                                              "horizontalpodautoscaling, nodelifecycle, gpujob, function, "
                                              "functionautoscaler)"),
    concurrent_workers: int = typer.Option(5, "--concurrent-workers", min=1,
                                           help="sync loops per controller"),
    min_resync_period: float = typer.Option(300.0, "--min-resync-period", min=0,
                                            help="seconds between informer resyncs (0: never)"),
    allocate_node_cidrs: bool = typer.Option(True, "--allocate-node-cidrs/--no-allocate-node-cidrs",
                                             help="give Nodes without spec.podCIDR one from --cluster-cidr"),
    cluster_cidr: str = typer.Option("10.244.0.0/16", "--cluster-cidr", help="the pod network, cut into "
                                                                             "podCIDRs for the Nodes"),
    node_cidr_mask_size: int = typer.Option(24, "--node-cidr-mask-size", min=1, max=30,
                                            help="prefix length of each Node's podCIDR"),
    hpa_sync_period: str = typer.Option("15s", "--horizontal-pod-autoscaler-sync-period",
                                        help="how often each HorizontalPodAutoscaler is synced (duration)"),
    hpa_tolerance: float = typer.Option(0.1, "--horizontal-pod-autoscaler-tolerance", min=0,
                                        help="metric/target ratio distance from 1.0 that causes no scaling"),
    hpa_downscale_stabilization: str = typer.Option(
        "5m", "--horizontal-pod-autoscaler-downscale-stabilization",
        help="look-back window for scale-down recommendations of HPAs without their own (duration)"),
    hpa_cpu_initialization_period: str = typer.Option(
        "5m", "--horizontal-pod-autoscaler-cpu-initialization-period",
        help="after a pod starts, CPU samples taken before it was Ready are skipped (duration)"),
    hpa_initial_readiness_delay: str = typer.Option(
        "30s", "--horizontal-pod-autoscaler-initial-readiness-delay",
        help="after a pod starts, readiness changes count as the initial readiness (duration)"),
    node_monitor_period: str = typer.Option("5s", "--node-monitor-period",
                                            help="how often every node's health is checked (duration)"),
    node_monitor_grace_period: str = typer.Option(
        "40s", "--node-monitor-grace-period",
        help="a node whose Lease and status went unrenewed this long is marked Ready=Unknown (duration)"),
    node_startup_grace_period: str = typer.Option(
        "1m", "--node-startup-grace-period",
        help="the same for a node that never posted a Ready condition (duration)"),
    node_eviction_rate: float = typer.Option(
        0.1, "--node-eviction-rate", min=0,
        help="nodes per second that may get a NoExecute not-ready/unreachable taint (0: none)"),
    slurm_cluster_check_period: str = typer.Option(
        "30s", "--slurm-cluster-check-period",
        help="how often each SlurmCluster is checked over SSH (login + sinfo) (duration)"),
    gpujob_poll_interval: str = typer.Option(
        "1s", "--gpujob-poll-interval",
        help="first interval of Slurm polling for a submitted GPUJob; grows x1.5 up to "
             "--gpujob-max-poll-interval while nothing changes (duration)"),
    gpujob_max_poll_interval: str = typer.Option("30s", "--gpujob-max-poll-interval",
                                                 help="longest interval of Slurm polling (duration)"),
    function_gateway_url: str = typer.Option(
        "http://127.0.0.1:8081", "--function-gateway-url",
        help="the serverless gateway: Functions' status.url and the function autoscaler's metrics"),
    function_gateway_token_file: str = typer.Option(
        None, "--function-gateway-token-file",
        help="a file holding the bearer token the function autoscaler sends to the gateway (one of the "
             "gateway's --token-auth-file tokens; needed when the gateway authenticates)"),
    function_stable_window: str = typer.Option(
        "60s", "--function-autoscaler-stable-window",
        help="the function autoscaler's stable window (duration); the panic window is a tenth of it"),
    local_path_root: str = typer.Option(
        "/var/lib/minik8s/local-path", "--local-path-root",
        help="where the local-path provisioner puts volumes on each node (<root>/<pv-name>); the kubelets' "
             "--local-path-root must be the same"),
    root_ca_file: str = typer.Option(
        None, "--root-ca-file", help="the cluster CA (PEM) published in every namespace as ConfigMap "
                                     "kube-root-ca.crt, for pods to verify the apiserver"),
    cluster_signing_cert_file: str = typer.Option(
        None, "--cluster-signing-cert-file",
        help="the CA certificate (PEM) csrsigning issues CertificateSigningRequests' certificates with"),
    cluster_signing_key_file: str = typer.Option(None, "--cluster-signing-key-file",
                                                 help="the CA's private key (PEM)"),
    cluster_signing_duration: str = typer.Option(
        "8760h", "--cluster-signing-duration",
        help="the longest validity of an issued certificate; a request's expirationSeconds may ask less (duration)"),
    leader_elect: bool = flags.LEADER_ELECT,
    leader_elect_lease_duration: str = flags.LEASE_DURATION,
    leader_elect_renew_deadline: str = flags.RENEW_DEADLINE,
    leader_elect_retry_period: str = flags.RETRY_PERIOD,
    leader_elect_resource_namespace: str = flags.RESOURCE_NAMESPACE,
    leader_elect_resource_name: str = flags.resource_name("kube-controller-manager"),
    v: bool = typer.Option(False, "-v", help="debug logging"),
) -> None:
    """Run the controllers that reconcile ReplicaSets, Deployments, owner references, Endpoints,
    node podCIDRs, DNS objects, HorizontalPodAutoscalers, node health (taints, evictions) and
    GPUJobs on Slurm clusters."""
    import asyncio
    import logging
    import signal

    from minik8s import logs
    from minik8s.client.leaderelection import LeadershipLost, run_elected
    from minik8s.client.rest import Client
    from minik8s.controllers.manager import ControllerManager, ControllerOptions, select_controllers
    from minik8s.controllers.nodeipam import CIDRSet

    logs.setup("controller-manager", v)
    log = logging.getLogger("controller-manager")
    election = flags.election_config(leader_elect, leader_elect_resource_name, leader_elect_resource_namespace,
                                     leader_elect_lease_duration, leader_elect_renew_deadline,
                                     leader_elect_retry_period)
    try:
        names = select_controllers(controllers)
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="--controllers") from exc
    try:
        CIDRSet(cluster_cidr, node_cidr_mask_size)
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="--cluster-cidr/--node-cidr-mask-size") from exc
    from minik8s.api.durations import parse_duration
    from minik8s.controllers.podautoscaler import AutoscalerOptions

    try:
        autoscaler = AutoscalerOptions(parse_duration(hpa_sync_period), hpa_tolerance,
                                       parse_duration(hpa_downscale_stabilization),
                                       parse_duration(hpa_cpu_initialization_period),
                                       parse_duration(hpa_initial_readiness_delay))
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="--horizontal-pod-autoscaler-*") from exc
    from minik8s.controllers.nodelifecycle import NodeLifecycleOptions

    try:
        node_lifecycle = NodeLifecycleOptions(parse_duration(node_monitor_period),
                                              parse_duration(node_monitor_grace_period),
                                              parse_duration(node_startup_grace_period), node_eviction_rate)
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="--node-monitor-*/--node-startup-grace-period") from exc
    from minik8s.controllers.gpujob import GPUJobOptions

    try:
        gpujob = GPUJobOptions(cluster_check_period=parse_duration(slurm_cluster_check_period),
                               poll_interval=parse_duration(gpujob_poll_interval),
                               max_poll_interval=parse_duration(gpujob_max_poll_interval))
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="--slurm-cluster-check-period/--gpujob-*") from exc
    try:
        stable_window = parse_duration(function_stable_window)
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="--function-autoscaler-stable-window") from exc
    gateway_token = ""
    if function_gateway_token_file:
        try:
            with open(function_gateway_token_file) as fh:
                gateway_token = fh.read().strip()
        except OSError as exc:
            raise typer.BadParameter(str(exc), param_hint="--function-gateway-token-file") from exc
        if not gateway_token or any(c.isspace() for c in gateway_token):
            raise typer.BadParameter(f"{function_gateway_token_file} must hold one token",
                                     param_hint="--function-gateway-token-file")
    root_ca = None
    if root_ca_file:
        try:
            with open(root_ca_file) as fh:
                root_ca = fh.read()
        except OSError as exc:
            raise typer.BadParameter(str(exc), param_hint="--root-ca-file") from exc
        if "-----BEGIN CERTIFICATE-----" not in root_ca:
            raise typer.BadParameter(f"{root_ca_file} holds no PEM certificate", param_hint="--root-ca-file")
    from pathlib import Path

    from minik8s.controllers.certificates import SigningCA

    signing_ca = None
    if bool(cluster_signing_cert_file) != bool(cluster_signing_key_file):
        raise typer.BadParameter("both or neither must be set", param_hint="--cluster-signing-cert-file/-key-file")
    if cluster_signing_cert_file:
        try:
            signing_cert = Path(cluster_signing_cert_file).read_bytes()
            signing_key = Path(cluster_signing_key_file).read_bytes()
            signing_ca = SigningCA(signing_cert, signing_key, parse_duration(cluster_signing_duration))
        except (OSError, ValueError) as exc:
            raise typer.BadParameter(str(exc), param_hint="--cluster-signing-*") from exc
    options = ControllerOptions(allocate_node_cidrs, cluster_cidr, node_cidr_mask_size, autoscaler,
                                node_lifecycle=node_lifecycle, gpujob=gpujob,
                                function_gateway_url=function_gateway_url, function_stable_window=stable_window,
                                function_gateway_token=gateway_token, local_path_root=local_path_root,
                                root_ca=root_ca, signing_ca=signing_ca)

    async def main() -> None:
        async with Client.from_kubeconfig(kubeconfig, context) as client:
            manager = ControllerManager(client, names, workers=concurrent_workers,
                                        resync_period=min_resync_period or None, options=options)
            task = asyncio.get_running_loop().create_task(run_elected(client, election, manager.run,
                                                                      "controller-manager"))
            for sig in (signal.SIGINT, signal.SIGTERM):
                asyncio.get_running_loop().add_signal_handler(sig, task.cancel)
            log.info("controller-manager controllers=%s apiserver=%s", ",".join(names), client.config.server)
            try:
                await task
            except asyncio.CancelledError:
                log.info("controller-manager stopping")
            except LeadershipLost as exc:
                log.error("leaderelection lost: %s", exc)
                raise SystemExit(1) from exc

    asyncio.run(main())
