"""``kubectl describe``: a readable story of an object, with its Events.

One module a kind or a small family of kinds, each following kubectl's own layout
(``pkg/describe``): :mod:`.pods` (Pod), :mod:`.apps` (Deployment, ReplicaSet, StatefulSet,
DaemonSet, ReplicationController), :mod:`.autoscaling` (HorizontalPodAutoscaler), :mod:`.access`
(ServiceAccount, Role, ClusterRole, RoleBinding, ClusterRoleBinding), :mod:`.cluster` (Node,
Namespace), :mod:`.services` (Service, Endpoints, EndpointSlice), :mod:`.networking` (Ingress,
NetworkPolicy, IngressClass), :mod:`.storage`
(PersistentVolume, PersistentVolumeClaim, StorageClass, CSINode), :mod:`.batch` (Job, CronJob),
:mod:`.config` (ConfigMap, Secret — never a Secret's values), :mod:`.policy` (PodDisruptionBudget),
:mod:`.quota` (ResourceQuota, LimitRange),
:mod:`.scheduling` (PriorityClass),
:mod:`.gpujobs` (GPUJob, minik8s' own).  Every other kind — custom resources, Event, Lease,
CustomResourceDefinition, minik8s' Function, Workflow... — gets the generic rendering kubectl's
``GenericDescriberFor`` gives unstructured objects (:func:`~.shared.describe_generic`).
:data:`DESCRIBERS` maps a Kind to its printer; a new kind adds its module and one row here.
"""

from __future__ import annotations

import asyncio
import sys
from typing import Annotated

import typer

from minik8s.api import errors
from minik8s.api.base import Obj
from minik8s.kubectl.describe.access import describe_role, describe_role_binding, describe_service_account
from minik8s.kubectl.describe.apps import (
    describe_daemon_set,
    describe_deployment,
    describe_replica_set,
    describe_replication_controller,
    describe_stateful_set,
)
from minik8s.kubectl.describe.autoscaling import describe_hpa
from minik8s.kubectl.describe.batch import describe_cronjob, describe_job
from minik8s.kubectl.describe.cluster import describe_namespace, describe_node
from minik8s.kubectl.describe.config import describe_config_map, describe_secret
from minik8s.kubectl.describe.gpujobs import describe_gpujob
from minik8s.kubectl.describe.networking import describe_ingress, describe_ingress_class, describe_networkpolicy
from minik8s.kubectl.describe.pods import describe_pod
from minik8s.kubectl.describe.policy import describe_pdb
from minik8s.kubectl.describe.quota import describe_limit_range, describe_quota
from minik8s.kubectl.describe.scheduling import describe_priority_class
from minik8s.kubectl.describe.services import describe_endpoints, describe_endpointslice, describe_service
from minik8s.kubectl.describe.shared import Describer, describe_generic, fetch_events
from minik8s.kubectl.describe.storage import (
    describe_csi_node,
    describe_persistent_volume,
    describe_persistent_volume_claim,
    describe_storage_class,
)
from minik8s.kubectl.errors import KubectlError, server_error
from minik8s.kubectl.resolve import parse_targets
from minik8s.kubectl.sections import meta_of
from minik8s.kubectl.session import GlobalOptions, Session

__all__ = [
    "BUILTIN_GROUPS",
    "DESCRIBERS",
    "Describer",
    "describe",
    "describe_config_map",
    "describe_daemon_set",
    "describe_endpoints",
    "describe_cronjob",
    "describe_csi_node",
    "describe_deployment",
    "describe_generic",
    "describe_gpujob",
    "describe_hpa",
    "describe_ingress",
    "describe_ingress_class",
    "describe_job",
    "describe_namespace",
    "describe_pdb",
    "describe_node",
    "describe_persistent_volume",
    "describe_persistent_volume_claim",
    "describe_pod",
    "describe_priority_class",
    "describe_replica_set",
    "describe_replication_controller",
    "describe_role",
    "describe_role_binding",
    "describe_secret",
    "describe_service",
    "describe_service_account",
    "describe_stateful_set",
    "describe_storage_class",
    "describer_for",
    "fetch_events",
    "run_describe",
]

#: Kind -> its printer (kinds not listed get the generic rendering).
DESCRIBERS: dict[str, Describer] = {
    "Pod": describe_pod,
    "Node": describe_node,
    "Namespace": describe_namespace,
    "Service": describe_service,
    "GPUJob": describe_gpujob,
    "ConfigMap": describe_config_map,
    "Secret": describe_secret,
    "Job": describe_job,
    "CronJob": describe_cronjob,
    "Deployment": describe_deployment,
    "ReplicaSet": describe_replica_set,
    "HorizontalPodAutoscaler": describe_hpa,
    "ServiceAccount": describe_service_account,
    "Role": describe_role,
    "ClusterRole": describe_role,
    "RoleBinding": describe_role_binding,
    "ClusterRoleBinding": describe_role_binding,
    "StatefulSet": describe_stateful_set,
    "DaemonSet": describe_daemon_set,
    "ReplicationController": describe_replication_controller,
    "Ingress": describe_ingress,
    "NetworkPolicy": describe_networkpolicy,
    "Endpoints": describe_endpoints,
    "EndpointSlice": describe_endpointslice,
    "PersistentVolume": describe_persistent_volume,
    "PersistentVolumeClaim": describe_persistent_volume_claim,
    "StorageClass": describe_storage_class,
    "PodDisruptionBudget": describe_pdb,
    "ResourceQuota": describe_quota,
    "LimitRange": describe_limit_range,
    "PriorityClass": describe_priority_class,
    "IngressClass": describe_ingress_class,
    "CSINode": describe_csi_node,
}
#: The API groups whose kinds :data:`DESCRIBERS` describes (a custom resource of another group
#: with the same kind name gets the generic rendering, as kubectl looks describers up by group and kind).
BUILTIN_GROUPS = frozenset({"", "apps", "batch", "autoscaling", "rbac.authorization.k8s.io", "networking.k8s.io",
                            "storage.k8s.io", "minik8s.io", "policy", "discovery.k8s.io", "scheduling.k8s.io"})


def describer_for(kind: str, group: str | None = None) -> Describer:
    """The printer for ``kind`` (of ``group``, when given): its own layout when it has one, else the
    generic rendering."""
    if group is not None and group not in BUILTIN_GROUPS:
        return describe_generic
    return DESCRIBERS.get(kind, describe_generic)


async def run_describe(opts: GlobalOptions, args: list[str], selector: str, all_namespaces: bool) -> int:
    """Describe what the arguments name; returns 1 when something was not found."""
    async with Session(opts) as s:
        targets = parse_targets(s.registry, args)
        # kubectl falls back to a name prefix only for ``describe TYPE NAME`` (two arguments), and then
        # writes each description followed by an empty line
        prefix_mode = False
        failed = False
        texts: list[str] = []
        for t in targets:
            ns = None if (all_namespaces or not t.rt.namespaced) else s.namespace
            objs: list[Obj] = []
            if t.names:
                for name in t.names:
                    try:
                        objs.append(await s.client.get(t.rt, name, ns))
                    except errors.NotFound as exc:
                        if len(args) != 2:
                            print(server_error(exc), file=sys.stderr)
                            failed = True
                            continue
                        prefix_mode = True
                        listed = await s.client.list_all(t.rt, ns, label_selector=selector or None)
                        matches = [o for o in listed.get("items") or [] if str(meta_of(o).get("name")).startswith(name)]
                        if not matches:
                            print(server_error(exc), file=sys.stderr)
                            failed = True
                        objs += matches
            else:
                listed = await s.client.list_all(t.rt, ns, label_selector=selector or None)
                objs = list(listed.get("items") or [])
            describer = describer_for(t.rt.kind, t.rt.group)
            for obj in objs:
                texts.append(await describer(s, t.rt, obj))
        if texts and prefix_mode:
            sys.stdout.write("".join(t + "\n" for t in texts))
            sys.stdout.flush()
        elif texts:
            # kubectl writes "\n\n" before every description but the first (each ends in "\n")
            sys.stdout.write("\n\n\n".join(t.rstrip("\n") for t in texts) + "\n")
            sys.stdout.flush()
        elif not failed:
            namespaced = not all_namespaces and any(t.rt.namespaced for t in targets)
            where = f" in {s.namespace} namespace" if namespaced else ""
            print(f"No resources found{where}.", file=sys.stderr)
        return 1 if failed else 0


def describe(
    ctx: typer.Context,
    args: Annotated[list[str] | None, typer.Argument(metavar="TYPE [NAME_PREFIX...] | TYPE/NAME...",
                                                     help="what to describe")] = None,
    selector: Annotated[str, typer.Option("-l", "--selector", help="label selector")] = "",
    all_namespaces: Annotated[bool, typer.Option("-A", "--all-namespaces", help="across namespaces")] = False,
) -> None:
    """Show details of a specific resource or group of resources, with their events."""
    if not args:
        raise KubectlError('You must specify the type of resource to describe. Use "kubectl api-resources" '
                           "for a complete list of supported resources.")
    code = asyncio.run(run_describe(ctx.obj, args, selector, all_namespaces))
    if code:
        raise typer.Exit(code)

