"""Per-kind behaviour of the generic REST handlers: defaulting, validation, update rules.

One module per kind with special needs (Kubernetes' ``pkg/registry/<group>/<kind>/strategy.go``);
:mod:`.base` holds :class:`~.base.Strategy` (what every other kind gets, :data:`~.base.GENERIC`)
and the validators several kinds share.  Adding a kind's strategy = a module here plus a row in
:func:`default_strategies`.
"""

from __future__ import annotations

from minik8s.apiserver.strategies.base import GENERIC, Strategy
from minik8s.apiserver.strategies.config import ConfigMapStrategy, SecretStrategy
from minik8s.apiserver.strategies.controllerrevision import ControllerRevisionStrategy
from minik8s.apiserver.strategies.csi import csi_strategies
from minik8s.apiserver.strategies.daemonset import DaemonSetStrategy
from minik8s.apiserver.strategies.deployment import DeploymentStrategy
from minik8s.apiserver.strategies.dns import DNSStrategy
from minik8s.apiserver.strategies.endpointslice import EndpointSliceStrategy
from minik8s.apiserver.strategies.event import EventStrategy
from minik8s.apiserver.strategies.flowcontrol import FlowSchemaStrategy, PriorityLevelConfigurationStrategy
from minik8s.apiserver.strategies.gpujob import GPUJobStrategy, SlurmClusterStrategy
from minik8s.apiserver.strategies.horizontalpodautoscaler import HorizontalPodAutoscalerStrategy
from minik8s.apiserver.strategies.ingress import IngressStrategy
from minik8s.apiserver.strategies.ingressclass import IngressClassStrategy
from minik8s.apiserver.strategies.job import CronJobStrategy, JobStrategy
from minik8s.apiserver.strategies.namespace import NamespaceStrategy
from minik8s.apiserver.strategies.networkpolicy import NetworkPolicyStrategy
from minik8s.apiserver.strategies.node import NodeStrategy
from minik8s.apiserver.strategies.pod import PodStrategy
from minik8s.apiserver.strategies.poddisruptionbudget import PodDisruptionBudgetStrategy
from minik8s.apiserver.strategies.podtemplate import PodTemplateStrategy
from minik8s.apiserver.strategies.priorityclass import PriorityClassStrategy
from minik8s.apiserver.strategies.rbac import rbac_strategies
from minik8s.apiserver.strategies.replicaset import ReplicaSetStrategy
from minik8s.apiserver.strategies.replicationcontroller import ReplicationControllerStrategy
from minik8s.apiserver.strategies.resourcequota import LimitRangeStrategy, ResourceQuotaStrategy
from minik8s.apiserver.strategies.runtimeclass import RuntimeClassStrategy
from minik8s.apiserver.strategies.serverless import serverless_strategies
from minik8s.apiserver.strategies.service import ServiceStrategy
from minik8s.apiserver.strategies.statefulset import StatefulSetStrategy
from minik8s.apiserver.strategies.storage import storage_strategies

__all__ = ["GENERIC", "Strategy", "default_strategies"]


def default_strategies(service_cidr: str = "10.96.0.0/16",
                       node_port_range: tuple[int, int] = (30000, 32767)) -> dict[str, Strategy]:
    """The strategy of every kind that has special needs, by kind (others use :data:`GENERIC`).

    ``service_cidr`` and ``node_port_range`` (inclusive) are where Services get their ClusterIPs
    and nodePorts (kube-apiserver's ``--service-cluster-ip-range`` / ``--service-node-port-range``).
    """
    return {
        "Namespace": NamespaceStrategy(),
        "Pod": PodStrategy(),
        "Node": NodeStrategy(),
        "Event": EventStrategy(),
        "Service": ServiceStrategy(service_cidr, node_port_range),
        "ReplicaSet": ReplicaSetStrategy(),
        "ReplicationController": ReplicationControllerStrategy(),
        "PodTemplate": PodTemplateStrategy(),
        "Deployment": DeploymentStrategy(),
        "DaemonSet": DaemonSetStrategy(),
        "StatefulSet": StatefulSetStrategy(),
        "ControllerRevision": ControllerRevisionStrategy(),
        "Job": JobStrategy(),
        "CronJob": CronJobStrategy(),
        "DNS": DNSStrategy(),
        "Ingress": IngressStrategy(),
        "IngressClass": IngressClassStrategy(),
        "RuntimeClass": RuntimeClassStrategy(),
        "NetworkPolicy": NetworkPolicyStrategy(),
        "EndpointSlice": EndpointSliceStrategy(),
        "HorizontalPodAutoscaler": HorizontalPodAutoscalerStrategy(),
        "ConfigMap": ConfigMapStrategy(),
        "Secret": SecretStrategy(),
        "SlurmCluster": SlurmClusterStrategy(),
        "GPUJob": GPUJobStrategy(),
        "PodDisruptionBudget": PodDisruptionBudgetStrategy(),
        "ResourceQuota": ResourceQuotaStrategy(),
        "LimitRange": LimitRangeStrategy(),
        "PriorityClass": PriorityClassStrategy(),
        "FlowSchema": FlowSchemaStrategy(),
        "PriorityLevelConfiguration": PriorityLevelConfigurationStrategy(),
        **serverless_strategies(),
        **storage_strategies(),
        **csi_strategies(),
        **rbac_strategies(),
    }
