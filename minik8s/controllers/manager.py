"""The controller-manager: run the selected controllers over one set of shared informers.

Like kube-controller-manager: ``--controllers`` takes a comma list where ``*`` means every
controller, ``name`` enables one and ``-name`` disables one (default ``*``).  All
controllers share one :class:`~minik8s.client.factory.SharedInformerFactory`, so each kind
is listed and watched once.  On start every controller resyncs from the API (informers
list first), so restarting the controller-manager never duplicates work.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass, field

from minik8s.api.serverless import DEFAULT_GATEWAY_URL
from minik8s.api.storage import DEFAULT_LOCAL_PATH_ROOT
from minik8s.client.factory import SharedInformerFactory
from minik8s.client.rest import Client
from minik8s.controllers.base import Controller
from minik8s.controllers.certificates import (
    CSRApprovingController,
    CSRCleanerController,
    CSRSigningController,
    SigningCA,
)
from minik8s.controllers.cronjob import CronJobController
from minik8s.controllers.daemonset import DaemonSetController
from minik8s.controllers.deployment import DeploymentController
from minik8s.controllers.disruption import DisruptionController
from minik8s.controllers.dnsrecords import DNSController
from minik8s.controllers.endpoints import EndpointsController
from minik8s.controllers.endpointslice import EndpointSliceController
from minik8s.controllers.endpointslicemirroring import EndpointSliceMirroringController
from minik8s.controllers.function import FunctionController
from minik8s.controllers.functionautoscaler import FunctionAutoscaler
from minik8s.controllers.garbagecollector import GarbageCollector
from minik8s.controllers.gpujob import GPUJobController, GPUJobOptions
from minik8s.controllers.job import JobController
from minik8s.controllers.localpath import LocalPathProvisioner
from minik8s.controllers.nodeipam import DEFAULT_CLUSTER_CIDR, DEFAULT_NODE_CIDR_MASK_SIZE, NodeIPAMController
from minik8s.controllers.nodelifecycle import NodeLifecycleController, NodeLifecycleOptions
from minik8s.controllers.persistentvolume import PersistentVolumeController
from minik8s.controllers.podautoscaler import AutoscalerOptions, HorizontalPodAutoscalerController
from minik8s.controllers.replicaset import ReplicaSetController, ReplicationManager
from minik8s.controllers.resourcequota import ResourceQuotaController
from minik8s.controllers.rootcacert import RootCACertPublisher
from minik8s.controllers.serviceaccounts import ServiceAccountsController
from minik8s.controllers.statefulset import StatefulSetController
from minik8s.controllers.volumeprotection import PVCProtectionController, PVProtectionController

log = logging.getLogger("controller-manager")


@dataclass(frozen=True)
class ControllerOptions:
    """Settings of individual controllers (kube-controller-manager flags of the same names):
    ``allocate_node_cidrs`` enables the node IPAM controller, which cuts ``cluster_cidr`` into
    ``/node_cidr_mask_size`` podCIDRs; ``autoscaler`` holds the ``--horizontal-pod-autoscaler-*`` flags;
    ``node_lifecycle`` the ``--node-monitor-*``, ``--node-eviction-rate`` and default toleration flags;
    ``gpujob`` the timings of the GPUJob and SlurmCluster controller;
    ``function_gateway_url`` the serverless gateway (Function URLs, the autoscaler's metrics) and
    ``function_stable_window`` the function autoscaler's stable window (seconds; panic: a tenth);
    ``function_gateway_token`` the bearer token the autoscaler sends to the gateway ("" = none);
    ``job_backoff_base``/``job_backoff_max`` the Job controller's pod-failure back-off (seconds: first
    delay, doubled per failure, and its cap); ``local_path_root`` where the local-path provisioner puts
    volumes on the nodes; ``root_ca`` the PEM of ``--root-ca-file`` (published as ``kube-root-ca.crt``);
    ``signing_ca`` the ``--cluster-signing-*`` CA and duration csrsigning issues with (None: it signs nothing)."""

    allocate_node_cidrs: bool = True
    cluster_cidr: str = DEFAULT_CLUSTER_CIDR
    node_cidr_mask_size: int = DEFAULT_NODE_CIDR_MASK_SIZE
    autoscaler: AutoscalerOptions = field(default_factory=AutoscalerOptions)
    node_lifecycle: NodeLifecycleOptions = field(default_factory=NodeLifecycleOptions)
    gpujob: GPUJobOptions = field(default_factory=GPUJobOptions)
    function_gateway_url: str = DEFAULT_GATEWAY_URL
    function_stable_window: float = 60.0
    function_gateway_token: str = ""
    job_backoff_base: float = 10.0
    job_backoff_max: float = 360.0
    local_path_root: str = DEFAULT_LOCAL_PATH_ROOT
    root_ca: str | None = None
    signing_ca: SigningCA | None = None


ControllerFactory = Callable[[Client, SharedInformerFactory, ControllerOptions], Controller]

#: Controller name (as ``--controllers`` spells it) → constructor.
CONTROLLERS: dict[str, ControllerFactory] = {
    "replicaset": lambda c, f, o: ReplicaSetController(c, f),
    "deployment": lambda c, f, o: DeploymentController(c, f),
    "daemonset": lambda c, f, o: DaemonSetController(c, f),
    "statefulset": lambda c, f, o: StatefulSetController(c, f),
    "garbagecollector": lambda c, f, o: GarbageCollector(c, f),
    "endpoint": lambda c, f, o: EndpointsController(c, f),
    "endpointslice": lambda c, f, o: EndpointSliceController(c, f),
    "endpointslicemirroring": lambda c, f, o: EndpointSliceMirroringController(c, f),
    "nodeipam": lambda c, f, o: NodeIPAMController(c, f, cluster_cidr=o.cluster_cidr,
                                                   node_cidr_mask_size=o.node_cidr_mask_size),
    "dns": lambda c, f, o: DNSController(c, f),
    "horizontalpodautoscaling": lambda c, f, o: HorizontalPodAutoscalerController(c, f, o.autoscaler),
    "nodelifecycle": lambda c, f, o: NodeLifecycleController(c, f, o.node_lifecycle),
    "gpujob": lambda c, f, o: GPUJobController(c, f, o.gpujob),
    "function": lambda c, f, o: FunctionController(c, f, o.function_gateway_url),
    "functionautoscaler": lambda c, f, o: FunctionAutoscaler(c, f, o.function_gateway_url,
                                                             stable_window=o.function_stable_window,
                                                             gateway_token=o.function_gateway_token),
    "serviceaccount": lambda c, f, o: ServiceAccountsController(c, f),
    "root-ca-cert-publisher": lambda c, f, o: RootCACertPublisher(c, f, o.root_ca),
    "replicationcontroller": lambda c, f, o: ReplicationManager(c, f),
    "job": lambda c, f, o: JobController(c, f, backoff_base=o.job_backoff_base, backoff_max=o.job_backoff_max),
    "cronjob": lambda c, f, o: CronJobController(c, f),
    "persistentvolume-binder": lambda c, f, o: PersistentVolumeController(c, f),
    "pvc-protection": lambda c, f, o: PVCProtectionController(c, f),
    "pv-protection": lambda c, f, o: PVProtectionController(c, f),
    "local-path-provisioner": lambda c, f, o: LocalPathProvisioner(c, f, root=o.local_path_root),
    "disruption": lambda c, f, o: DisruptionController(c, f),
    "resourcequota": lambda c, f, o: ResourceQuotaController(c, f),
    "csrsigning": lambda c, f, o: CSRSigningController(c, f, o.signing_ca),
    "csrapproving": lambda c, f, o: CSRApprovingController(c, f),
    "csrcleaner": lambda c, f, o: CSRCleanerController(c, f),
}
#: Controllers of cluster-scoped objects: left out of a namespace-limited manager unless named.
CLUSTER_SCOPED = frozenset({"csrsigning", "csrapproving", "csrcleaner",
                            "nodeipam", "nodelifecycle", "persistentvolume-binder", "pv-protection",
                            "local-path-provisioner"})
#: Accepted aliases (Kubernetes' newer names).
ALIASES = {"replicaset-controller": "replicaset", "deployment-controller": "deployment",
           "daemonset-controller": "daemonset", "statefulset-controller": "statefulset",
           "garbage-collector-controller": "garbagecollector", "garbage-collector": "garbagecollector",
           "endpoints": "endpoint", "endpoints-controller": "endpoint",
           "endpointslice-controller": "endpointslice",
           "endpointslice-mirroring-controller": "endpointslicemirroring", "node-ipam-controller": "nodeipam",
           "dns-controller": "dns", "horizontal-pod-autoscaler-controller": "horizontalpodautoscaling",
           "hpa": "horizontalpodautoscaling", "node-lifecycle-controller": "nodelifecycle",
           "gpujob-controller": "gpujob", "slurmcluster": "gpujob",
           "function-controller": "function", "function-autoscaler": "functionautoscaler",
           "serviceaccount-controller": "serviceaccount", "replication-controller": "replicationcontroller",
           "replicationmanager": "replicationcontroller",
           "job-controller": "job", "cronjob-controller": "cronjob",
           "persistentvolume-binder-controller": "persistentvolume-binder",
           "pvc-protection-controller": "pvc-protection", "pv-protection-controller": "pv-protection",
           "localpath": "local-path-provisioner", "disruption-controller": "disruption",
           "resourcequota-controller": "resourcequota", "certificatesigningrequest-signing-controller": "csrsigning",
           "certificatesigningrequest-approving-controller": "csrapproving",
           "certificatesigningrequest-cleaner-controller": "csrcleaner"}


def select_controllers(spec: str | None) -> list[str]:
    """Names enabled by a ``--controllers`` value (``"*"``, ``"replicaset,deployment"``, ``"*,-deployment"``).

    Raises ValueError for an unknown name.
    """
    items = [s.strip() for s in (spec or "*").split(",") if s.strip()] or ["*"]
    enabled: list[str] = []
    star = "*" in items
    disabled: set[str] = set()
    for item in items:
        if item == "*":
            continue
        negate = item.startswith("-")
        name = ALIASES.get(item.lstrip("-"), item.lstrip("-"))
        if name not in CONTROLLERS:
            raise ValueError(f'unknown controller "{item.lstrip("-")}" (known: {", ".join(CONTROLLERS)})')
        if negate:
            disabled.add(name)
        elif name not in enabled:
            enabled.append(name)
    if star:
        enabled = [n for n in CONTROLLERS if n not in disabled]
    return [n for n in enabled if n not in disabled]


class ControllerManager:
    """Builds and runs controllers; ``await run()`` until cancelled, then stops them cleanly.

    ``namespace`` limits every informer to one namespace (tests; None: the whole cluster);
    such a manager runs the controllers of cluster-scoped objects (:data:`CLUSTER_SCOPED`)
    only when they are named.  ``workers`` sync loops run per controller.
    ``resync_period`` (seconds or None) replays the caches periodically.  ``options``
    configures single controllers; ``allocate_node_cidrs=False`` leaves ``nodeipam`` out.
    """

    def __init__(self, client: Client, controllers: list[str] | None = None, workers: int = 5,
                 namespace: str | None = None, resync_period: float | None = 300.0,
                 options: ControllerOptions | None = None) -> None:
        self.client = client
        self.options = options or ControllerOptions()
        if controllers is None:
            controllers = [n for n in CONTROLLERS if namespace is None or n not in CLUSTER_SCOPED]
        self.names = [n for n in controllers if n != "nodeipam" or self.options.allocate_node_cidrs]
        self.workers = workers
        self.factory = SharedInformerFactory(client, namespace=namespace, resync_period=resync_period)
        self.controllers: dict[str, Controller] = {}
        for name in self.names:
            ctor = CONTROLLERS[name]
            self.controllers[name] = ctor(client, self.factory, self.options)
        self.started = asyncio.Event()

    async def run(self) -> None:
        """Start informers, wait for their first lists, run every controller until cancelled."""
        self.factory.start()
        tasks: list[asyncio.Task[None]] = []
        try:
            while not await self.factory.wait_for_cache_sync(timeout=30):
                log.warning("controller-manager still waiting for informer caches to sync")
            log.info("controller-manager caches synced; running %s", ",".join(self.controllers))
            loop = asyncio.get_running_loop()
            tasks = [loop.create_task(c.run(self.workers), name=name) for name, c in self.controllers.items()]
            self.started.set()
            await asyncio.gather(*tasks)
        finally:
            for controller in self.controllers.values():
                controller.shutdown()
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            await self.factory.shutdown()

