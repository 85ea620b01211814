"""Core (``v1``) kinds: Namespace, Pod, Node, Event, Binding, Service, Endpoints, ServiceAccount,
ReplicationController, PersistentVolume, PersistentVolumeClaim — Kubernetes field names and meanings.

ConfigMap and Secret live in :mod:`minik8s.api.config`.

Quantities (cpu, memory) stay strings as on the wire (``"100m"``, ``"128Mi"``);
use :mod:`minik8s.api.quantity` to read them in cores and bytes.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from minik8s.api.meta import (
    Condition,
    LabelSelector,
    ObjectMeta,
    ObjectReference,
    TypedObject,
)
from minik8s.api.model import Model

IntOrString = int | str
#: The protocols of container ports and Service ports.
PROTOCOLS = ("TCP", "UDP", "SCTP")
#: A Service's ``sessionAffinity`` values (``corev1.ServiceAffinity``), sorted as Kubernetes lists them.
SESSION_AFFINITIES = ("ClientIP", "None")
#: ``sessionAffinityConfig.clientIP.timeoutSeconds`` when ClientIP affinity is asked without one (3 hours),
#: and its largest value (1 day): Kubernetes' ``DefaultClientIPServiceAffinitySeconds`` and
#: ``MaxClientIPServiceAffinitySeconds``.
DEFAULT_CLIENT_IP_AFFINITY_SECONDS = 10800
MAX_CLIENT_IP_AFFINITY_SECONDS = 86400


# ---------------------------------------------------------------- Namespace
class NamespaceSpec(Model):
    finalizers: list[str] | None = None


class NamespaceStatus(Model):
    phase: str | None = None


class Namespace(TypedObject):
    spec: NamespaceSpec | None = None
    status: NamespaceStatus | None = None


# ---------------------------------------------------------------- Pod spec
class ConfigMapKeySelector(Model):
    """One key of a ConfigMap of the pod's namespace; ``optional``: a missing one is no error."""

    name: str | None = None
    key: str
    optional: bool | None = None


class SecretKeySelector(Model):
    """One key of a Secret of the pod's namespace; ``optional``: a missing one is no error."""

    name: str | None = None
    key: str
    optional: bool | None = None


class EnvVarSource(Model):
    field_ref: dict[str, Any] | None = None
    resource_field_ref: dict[str, Any] | None = None
    config_map_key_ref: ConfigMapKeySelector | None = None
    secret_key_ref: SecretKeySelector | None = None


class EnvVar(Model):
    name: str
    value: str | None = None
    value_from: EnvVarSource | None = None


class ConfigMapEnvSource(Model):
    name: str | None = None
    optional: bool | None = None


class SecretEnvSource(Model):
    name: str | None = None
    optional: bool | None = None


class EnvFromSource(Model):
    """Every key of a ConfigMap or Secret as a variable, named ``prefix`` + key."""

    prefix: str | None = None
    config_map_ref: ConfigMapEnvSource | None = None
    secret_ref: SecretEnvSource | None = None


class ContainerPort(Model):
    container_port: int
    host_port: int | None = None
    host_ip: str | None = Field(default=None, alias="hostIP")
    protocol: str | None = None
    name: str | None = None


class ResourceRequirements(Model):
    """``limits`` and ``requests`` maps of resource name → quantity string."""

    limits: dict[str, str] | None = None
    requests: dict[str, str] | None = None


class VolumeMount(Model):
    name: str
    mount_path: str
    read_only: bool | None = None
    sub_path: str | None = None


class ExecAction(Model):
    command: list[str] | None = None


class HTTPHeader(Model):
    name: str
    value: str


class HTTPGetAction(Model):
    path: str | None = None
    port: IntOrString
    host: str | None = None
    scheme: str | None = None
    http_headers: list[HTTPHeader] | None = None


class TCPSocketAction(Model):
    port: IntOrString
    host: str | None = None


class Probe(Model):
    """``corev1.Probe``; all durations in seconds."""

    exec: ExecAction | None = None
    http_get: HTTPGetAction | None = None
    tcp_socket: TCPSocketAction | None = None
    initial_delay_seconds: int | None = None
    timeout_seconds: int | None = None
    period_seconds: int | None = None
    success_threshold: int | None = None
    failure_threshold: int | None = None
    termination_grace_period_seconds: int | None = None


class LifecycleHandler(Model):
    exec: ExecAction | None = None
    http_get: HTTPGetAction | None = None
    tcp_socket: TCPSocketAction | None = None


class Lifecycle(Model):
    post_start: LifecycleHandler | None = None
    pre_stop: LifecycleHandler | None = None


class SeccompProfile(Model):
    """``type``: RuntimeDefault, Unconfined or Localhost (``localhostProfile`` then names a file
    under the kubelet's ``seccomp`` directory)."""
    type: str | None = None
    localhost_profile: str | None = None


class Capabilities(Model):
    """Linux capabilities by Kubernetes' names (``NET_ADMIN``, no ``CAP_`` prefix; ``ALL``)."""
    add: list[str] | None = None
    drop: list[str] | None = None


class SELinuxOptions(Model):
    user: str | None = None
    role: str | None = None
    type: str | None = None
    level: str | None = None


class SecurityContext(Model):
    """A container's ``securityContext``; a field set here wins over the pod's."""
    privileged: bool | None = None
    run_as_user: int | None = None
    run_as_group: int | None = None
    run_as_non_root: bool | None = None
    read_only_root_filesystem: bool | None = None
    allow_privilege_escalation: bool | None = None
    capabilities: Capabilities | None = None
    seccomp_profile: SeccompProfile | None = None
    proc_mount: str | None = None
    se_linux_options: SELinuxOptions | None = Field(default=None, alias="seLinuxOptions")


class Sysctl(Model):
    name: str
    value: str


class PodSecurityContext(Model):
    """The pod's ``securityContext``: defaults for its containers (runAs*, seccompProfile) and
    pod-wide settings (``supplementalGroups``, ``fsGroup``, ``sysctls``)."""
    run_as_user: int | None = None
    run_as_group: int | None = None
    run_as_non_root: bool | None = None
    supplemental_groups: list[int] | None = None
    fs_group: int | None = None
    fs_group_change_policy: str | None = None
    seccomp_profile: SeccompProfile | None = None
    se_linux_options: SELinuxOptions | None = Field(default=None, alias="seLinuxOptions")
    sysctls: list[Sysctl] | None = None


class Container(Model):
    name: str
    image: str | None = None
    command: list[str] | None = None
    args: list[str] | None = None
    working_dir: str | None = None
    ports: list[ContainerPort] | None = None
    env: list[EnvVar] | None = None
    env_from: list[EnvFromSource] | None = None
    resources: ResourceRequirements | None = None
    volume_mounts: list[VolumeMount] | None = None
    liveness_probe: Probe | None = None
    readiness_probe: Probe | None = None
    startup_probe: Probe | None = None
    lifecycle: Lifecycle | None = None
    termination_message_path: str | None = None
    termination_message_policy: str | None = None
    image_pull_policy: str | None = None
    security_context: SecurityContext | None = None
    stdin: bool | None = None
    tty: bool | None = None


class EphemeralContainer(Container):
    """A container added to a running pod for debugging (``corev1.EphemeralContainer``): the
    container fields (Kubernetes refuses ``ports``, probes, ``resources`` and ``lifecycle`` on it)
    plus ``targetContainerName``, the container whose process namespace it joins. Only the pod's
    ``ephemeralcontainers`` subresource adds one; it is never restarted nor removed."""
    target_container_name: str | None = None


class EmptyDirVolumeSource(Model):
    medium: str | None = None
    size_limit: str | None = None


class HostPathVolumeSource(Model):
    path: str
    type: str | None = None


class KeyToPath(Model):
    """Project ``key`` to the relative file ``path`` with permission bits ``mode`` (0-0777)."""

    key: str
    path: str
    mode: int | None = None


class ConfigMapVolumeSource(Model):
    """Files from a ConfigMap; ``defaultMode`` defaults to 0644 (420)."""

    name: str | None = None
    items: list[KeyToPath] | None = None
    default_mode: int | None = None
    optional: bool | None = None


class SecretVolumeSource(Model):
    """Files from a Secret; ``defaultMode`` defaults to 0644 (420)."""

    secret_name: str | None = None
    items: list[KeyToPath] | None = None
    default_mode: int | None = None
    optional: bool | None = None


class ObjectFieldSelector(Model):
    """A field of the pod (``metadata.name``, ``metadata.labels['k']``...); ``apiVersion`` defaults to ``v1``."""

    api_version: str | None = None
    field_path: str


class ResourceFieldSelector(Model):
    """A container's resource (``limits.cpu``, ``requests.memory``, ...) in units of ``divisor``
    (a quantity: ``1m``/``1`` for cpu, ``1``/``1Mi``/... for memory and ephemeral-storage)."""

    container_name: str | None = None
    resource: str
    divisor: str | int | None = None


class DownwardAPIVolumeFile(Model):
    """One file of a downwardAPI volume: relative ``path``, exactly one of ``fieldRef`` and
    ``resourceFieldRef``, permission bits ``mode`` (0-0777)."""

    path: str
    field_ref: ObjectFieldSelector | None = None
    resource_field_ref: ResourceFieldSelector | None = None
    mode: int | None = None


class DownwardAPIVolumeSource(Model):
    """Files with the pod's own metadata and its containers' resources; ``defaultMode`` 0644 (420)."""

    items: list[DownwardAPIVolumeFile] | None = None
    default_mode: int | None = None


class ConfigMapProjection(Model):
    """A ConfigMap as one source of a projected volume (modes come from the volume's ``defaultMode``)."""

    name: str | None = None
    items: list[KeyToPath] | None = None
    optional: bool | None = None


class SecretProjection(Model):
    """A Secret as one source of a projected volume."""

    name: str | None = None
    items: list[KeyToPath] | None = None
    optional: bool | None = None


class DownwardAPIProjection(Model):
    """Downward API files as one source of a projected volume."""

    items: list[DownwardAPIVolumeFile] | None = None


class ServiceAccountTokenProjection(Model):
    """A token of the pod's service account at ``path``, for ``audience``, valid for
    ``expirationSeconds`` (default 3600, at least 600)."""

    audience: str | None = None
    expiration_seconds: int | None = None
    path: str


class VolumeProjection(Model):
    """One source of a projected volume: exactly one of the four fields."""

    secret: SecretProjection | None = None
    downward_api: DownwardAPIProjection | None = Field(default=None, alias="downwardAPI")
    config_map: ConfigMapProjection | None = None
    service_account_token: ServiceAccountTokenProjection | None = None


class ProjectedVolumeSource(Model):
    """Several sources written into one directory; ``defaultMode`` 0644 (420)."""

    sources: list[VolumeProjection] | None = None
    default_mode: int | None = None


class PersistentVolumeClaimVolumeSource(Model):
    """A pod volume backed by the PersistentVolume bound to claim ``claimName`` (same namespace)."""

    claim_name: str
    read_only: bool | None = None


class NFSVolumeSource(Model):
    """An NFS export ``server:path`` (the node needs the kernel's NFS client)."""

    server: str
    path: str
    read_only: bool | None = None


class Volume(Model):
    name: str
    empty_dir: EmptyDirVolumeSource | None = None
    host_path: HostPathVolumeSource | None = None
    config_map: ConfigMapVolumeSource | None = None
    secret: SecretVolumeSource | None = None
    downward_api: DownwardAPIVolumeSource | None = Field(default=None, alias="downwardAPI")
    projected: ProjectedVolumeSource | None = None
    persistent_volume_claim: PersistentVolumeClaimVolumeSource | None = None
    nfs: NFSVolumeSource | None = None


class NodeSelectorRequirement(Model):
    key: str
    operator: str  # In, NotIn, Exists, DoesNotExist, Gt, Lt
    values: list[str] | None = None


class NodeSelectorTerm(Model):
    match_expressions: list[NodeSelectorRequirement] | None = None
    match_fields: list[NodeSelectorRequirement] | None = None


class NodeSelector(Model):
    node_selector_terms: list[NodeSelectorTerm]


class PreferredSchedulingTerm(Model):
    weight: int
    preference: NodeSelectorTerm


class NodeAffinity(Model):
    required_during_scheduling_ignored_during_execution: NodeSelector | None = None
    preferred_during_scheduling_ignored_during_execution: list[PreferredSchedulingTerm] | None = None


class PodAffinityTerm(Model):
    label_selector: LabelSelector | None = None
    namespaces: list[str] | None = None
    topology_key: str


class WeightedPodAffinityTerm(Model):
    weight: int
    pod_affinity_term: PodAffinityTerm


class PodAffinity(Model):
    required_during_scheduling_ignored_during_execution: list[PodAffinityTerm] | None = None
    preferred_during_scheduling_ignored_during_execution: list[WeightedPodAffinityTerm] | None = None


class Affinity(Model):
    node_affinity: NodeAffinity | None = None
    pod_affinity: PodAffinity | None = None
    pod_anti_affinity: PodAffinity | None = None


class Toleration(Model):
    key: str | None = None
    operator: str | None = None  # Exists, Equal
    value: str | None = None
    effect: str | None = None  # NoSchedule, PreferNoSchedule, NoExecute
    toleration_seconds: int | None = None


class TopologySpreadConstraint(Model):
    max_skew: int
    topology_key: str
    when_unsatisfiable: str
    label_selector: LabelSelector | None = None


class PodDNSConfig(Model):
    nameservers: list[str] | None = None
    searches: list[str] | None = None
    options: list[dict[str, Any]] | None = None


class HostAlias(Model):
    """An ``/etc/hosts`` entry the kubelet adds to the pod's managed hosts file."""

    ip: str | None = None
    hostnames: list[str] | None = None


class PodSpec(Model):
    containers: list[Container]
    init_containers: list[Container] | None = None
    ephemeral_containers: list[EphemeralContainer] | None = None
    volumes: list[Volume] | None = None
    restart_policy: str | None = None
    termination_grace_period_seconds: int | None = None
    active_deadline_seconds: int | None = None
    dns_policy: str | None = None
    dns_config: PodDNSConfig | None = None
    node_selector: dict[str, str] | None = None
    service_account_name: str | None = None
    node_name: str | None = None
    host_network: bool | None = None
    share_process_namespace: bool | None = None
    hostname: str | None = None
    subdomain: str | None = None
    set_hostname_as_fqdn: bool | None = Field(default=None, alias="setHostnameAsFQDN")
    host_aliases: list[HostAlias] | None = None
    affinity: Affinity | None = None
    scheduler_name: str | None = None
    tolerations: list[Toleration] | None = None
    topology_spread_constraints: list[TopologySpreadConstraint] | None = None
    priority: int | None = None
    priority_class_name: str | None = None
    preemption_policy: str | None = None
    security_context: PodSecurityContext | None = None


# ---------------------------------------------------------------- Pod status
class ContainerStateWaiting(Model):
    reason: str | None = None
    message: str | None = None


class ContainerStateRunning(Model):
    started_at: str | None = None


class ContainerStateTerminated(Model):
    exit_code: int
    signal: int | None = None
    reason: str | None = None
    message: str | None = None
    started_at: str | None = None
    finished_at: str | None = None
    container_id: str | None = Field(default=None, alias="containerID")


class ContainerState(Model):
    waiting: ContainerStateWaiting | None = None
    running: ContainerStateRunning | None = None
    terminated: ContainerStateTerminated | None = None


class ContainerStatus(Model):
    name: str
    state: ContainerState | None = None
    last_state: ContainerState | None = None
    ready: bool = False
    restart_count: int = 0
    image: str | None = None
    image_id: str | None = Field(default=None, alias="imageID")
    container_id: str | None = Field(default=None, alias="containerID")
    started: bool | None = None


class PodIP(Model):
    ip: str


class PodStatus(Model):
    phase: str | None = None
    conditions: list[Condition] | None = None
    message: str | None = None
    reason: str | None = None
    host_ip: str | None = Field(default=None, alias="hostIP")
    pod_ip: str | None = Field(default=None, alias="podIP")
    pod_ips: list[PodIP] | None = Field(default=None, alias="podIPs")
    start_time: str | None = None
    container_statuses: list[ContainerStatus] | None = None
    init_container_statuses: list[ContainerStatus] | None = None
    ephemeral_container_statuses: list[ContainerStatus] | None = None
    qos_class: str | None = None
    nominated_node_name: str | None = None


class Pod(TypedObject):
    spec: PodSpec
    status: PodStatus | None = None


def qos_class(spec: dict[str, Any]) -> str:
    """A pod's QoS class from its containers' resources (Kubernetes' ``GetPodQOS``):
    ``Guaranteed`` (cpu and memory limits everywhere, requests equal to them),
    ``BestEffort`` (no requests or limits at all), else ``Burstable``."""
    any_set = False
    guaranteed = True
    for c in spec.get("containers") or []:
        res = c.get("resources") or {}
        lim, req = res.get("limits") or {}, res.get("requests") or {}
        if lim or req:
            any_set = True
        for r in ("cpu", "memory"):
            if r not in lim or (r in req and str(req[r]) != str(lim[r])):
                guaranteed = False
    if not any_set:
        return "BestEffort"
    return "Guaranteed" if guaranteed else "Burstable"


class PodTemplateSpec(Model):
    metadata: ObjectMeta | None = None
    spec: PodSpec


class PodTemplate(TypedObject):
    """v1 PodTemplate: a pod template stored as an object of its own (``kubectl get podtemplates``)."""

    template: PodTemplateSpec | None = None


# ---------------------------------------------------------------- Binding
class Binding(TypedObject):
    """``POST pods/{name}/binding``: ``target`` names the Node (``kind: Node``, ``name``)."""

    target: ObjectReference


# ---------------------------------------------------------------- Node
class Taint(Model):
    key: str
    value: str | None = None
    effect: str  # NoSchedule, PreferNoSchedule, NoExecute
    time_added: str | None = None


class NodeSpec(Model):
    pod_cidr: str | None = Field(default=None, alias="podCIDR")
    pod_cidrs: list[str] | None = Field(default=None, alias="podCIDRs")
    unschedulable: bool | None = None
    taints: list[Taint] | None = None
    provider_id: str | None = Field(default=None, alias="providerID")


class NodeAddress(Model):
    type: str  # InternalIP, ExternalIP, Hostname
    address: str


class NodeSystemInfo(Model):
    machine_id: str | None = Field(default=None, alias="machineID")
    system_uuid: str | None = Field(default=None, alias="systemUUID")
    boot_id: str | None = Field(default=None, alias="bootID")
    kernel_version: str | None = None
    os_image: str | None = None
    container_runtime_version: str | None = None
    kubelet_version: str | None = None
    kube_proxy_version: str | None = None
    operating_system: str | None = None
    architecture: str | None = None


class DaemonEndpoint(Model):
    port: int = Field(alias="Port")


class NodeDaemonEndpoints(Model):
    kubelet_endpoint: DaemonEndpoint | None = None


class NodeStatus(Model):
    capacity: dict[str, str] | None = None
    allocatable: dict[str, str] | None = None
    phase: str | None = None
    conditions: list[Condition] | None = None
    addresses: list[NodeAddress] | None = None
    daemon_endpoints: NodeDaemonEndpoints | None = None
    node_info: NodeSystemInfo | None = None
    images: list[dict[str, Any]] | None = None


class Node(TypedObject):
    spec: NodeSpec | None = None
    status: NodeStatus | None = None


# ---------------------------------------------------------------- Event
class EventSource(Model):
    component: str | None = None
    host: str | None = None


class EventSeries(Model):
    """An isomorphic event's repetitions: ``count`` (at least 2) up to ``lastObservedTime`` (MicroTime)."""

    count: int | None = None
    last_observed_time: str | None = None
    state: str | None = None  # core v1 only, deprecated


class Event(TypedObject):
    """``corev1.Event``: something that happened to ``involvedObject`` (``related``: a second object)."""

    involved_object: ObjectReference
    reason: str | None = None
    message: str | None = None
    source: EventSource | None = None
    first_timestamp: str | None = None
    last_timestamp: str | None = None
    event_time: str | None = None
    count: int | None = None
    type: str | None = None  # Normal, Warning
    reporting_component: str | None = None
    reporting_instance: str | None = None
    action: str | None = None
    series: EventSeries | None = None
    related: ObjectReference | None = None


# ---------------------------------------------------------------- ComponentStatus
class ComponentCondition(Model):
    """``type: Healthy``, ``status`` True/False/Unknown, the probe's ``message`` and ``error``."""

    type: str
    status: str
    message: str | None = None
    error: str | None = None


class ComponentStatus(TypedObject):
    """``corev1.ComponentStatus`` (deprecated in v1.19+): a control-plane component's health, computed when read."""

    conditions: list[ComponentCondition] | None = None


# ---------------------------------------------------------------- Service / Endpoints
class ServicePort(Model):
    name: str | None = None
    protocol: str | None = None
    port: int
    target_port: IntOrString | None = None
    node_port: int | None = None
    app_protocol: str | None = None


class ClientIPConfig(Model):
    timeout_seconds: int | None = None  # how long a client sticks to its endpoint since its last connection


class SessionAffinityConfig(Model):
    client_ip: ClientIPConfig | None = Field(default=None, alias="clientIP")


class ServiceSpec(Model):
    type: str | None = None  # ClusterIP, NodePort, LoadBalancer, ExternalName
    selector: dict[str, str] | None = None
    ports: list[ServicePort] | None = None
    cluster_ip: str | None = Field(default=None, alias="clusterIP")
    cluster_ips: list[str] | None = Field(default=None, alias="clusterIPs")
    external_ips: list[str] | None = Field(default=None, alias="externalIPs")
    external_name: str | None = None
    session_affinity: str | None = None  # None, ClientIP
    session_affinity_config: SessionAffinityConfig | None = None
    external_traffic_policy: str | None = None
    internal_traffic_policy: str | None = None
    ip_families: list[str] | None = None
    ip_family_policy: str | None = None
    publish_not_ready_addresses: bool | None = None


class LoadBalancerIngress(Model):
    ip: str | None = None
    hostname: str | None = None


class LoadBalancerStatus(Model):
    ingress: list[LoadBalancerIngress] | None = None


class ServiceStatus(Model):
    load_balancer: LoadBalancerStatus | None = None
    conditions: list[Condition] | None = None


class Service(TypedObject):
    spec: ServiceSpec | None = None
    status: ServiceStatus | None = None


class EndpointAddress(Model):
    ip: str
    hostname: str | None = None
    node_name: str | None = None
    target_ref: ObjectReference | None = None


class EndpointPort(Model):
    name: str | None = None
    port: int
    protocol: str | None = None
    app_protocol: str | None = None


class EndpointSubset(Model):
    addresses: list[EndpointAddress] | None = None
    not_ready_addresses: list[EndpointAddress] | None = None
    ports: list[EndpointPort] | None = None


class Endpoints(TypedObject):
    subsets: list[EndpointSubset] | None = None


# ---------------------------------------------------------------- ServiceAccount
class LocalObjectReference(Model):
    """An object of the same namespace, by ``name``."""

    name: str | None = None


class ServiceAccount(TypedObject):
    """``corev1.ServiceAccount``: an identity for processes in pods.  The ``serviceaccount``
    controller keeps a ``default`` one in every namespace (tokens are not issued yet)."""

    secrets: list[ObjectReference] | None = None
    image_pull_secrets: list[LocalObjectReference] | None = None
    automount_service_account_token: bool | None = None


# ---------------------------------------------------------------- ReplicationController
class ReplicationControllerSpec(Model):
    """``selector`` is equality-based (a label map), defaulted from the template's labels."""

    replicas: int | None = None
    min_ready_seconds: int | None = None
    selector: dict[str, str] | None = None
    template: PodTemplateSpec | None = None


class ReplicationControllerStatus(Model):
    # also the fields of apps/v1 ReplicaSetStatus (minik8s.api.apps subclasses it); no docstring: a
    # model's docstring would replace Kubernetes' description in the OpenAPI definitions
    replicas: int = 0
    fully_labeled_replicas: int | None = None
    ready_replicas: int | None = None
    available_replicas: int | None = None
    observed_generation: int | None = None
    conditions: list[Condition] | None = None


class ReplicationController(TypedObject):
    """``corev1.ReplicationController``: the ReplicaSet's predecessor, kept by the same controller
    code (Kubernetes still serves it); ``spec.selector`` is a label map."""

    spec: ReplicationControllerSpec | None = None
    status: ReplicationControllerStatus | None = None


# ---------------------------------------------------------------- PersistentVolume, PersistentVolumeClaim
class LocalVolumeSource(Model):
    """A directory (or disk) of one node; the PV needs ``nodeAffinity`` naming that node."""

    path: str
    fs_type: str | None = None


class VolumeNodeAffinity(Model):
    """The nodes a PersistentVolume can be reached from (``required`` node selector)."""

    required: NodeSelector | None = None


class PersistentVolumeSpec(Model):
    """``corev1.PersistentVolumeSpec``: ``capacity`` (``{"storage": "1Gi"}``), ``accessModes``
    (ReadWriteOnce, ReadOnlyMany, ReadWriteMany, ReadWriteOncePod), one source (``hostPath``,
    ``local``, ``nfs``), ``persistentVolumeReclaimPolicy`` (Retain (default), Delete, Recycle),
    ``claimRef`` (the claim it is bound or pre-bound to), ``volumeMode`` (Filesystem)."""

    capacity: dict[str, str] | None = None
    access_modes: list[str] | None = None
    persistent_volume_reclaim_policy: str | None = None
    storage_class_name: str | None = None
    claim_ref: ObjectReference | None = None
    node_affinity: VolumeNodeAffinity | None = None
    volume_mode: str | None = None
    mount_options: list[str] | None = None
    host_path: HostPathVolumeSource | None = None
    local: LocalVolumeSource | None = None
    nfs: NFSVolumeSource | None = None


class PersistentVolumeStatus(Model):
    """``phase``: Pending, Available, Bound, Released or Failed."""

    phase: str | None = None
    message: str | None = None
    reason: str | None = None
    last_phase_transition_time: str | None = None


class PersistentVolume(TypedObject):
    """``corev1.PersistentVolume`` (cluster-scoped): a piece of storage a claim can bind."""

    spec: PersistentVolumeSpec | None = None
    status: PersistentVolumeStatus | None = None


class VolumeResourceRequirements(Model):
    """``requests.storage`` is the size a claim asks for (a quantity: ``1Gi``)."""

    limits: dict[str, str] | None = None
    requests: dict[str, str] | None = None


class PersistentVolumeClaimSpec(Model):
    """``corev1.PersistentVolumeClaimSpec``: what a claim asks for; ``volumeName`` names the PV
    it binds (set by the binder, or by the user to pre-bind)."""

    access_modes: list[str] | None = None
    selector: LabelSelector | None = None
    resources: VolumeResourceRequirements | None = None
    volume_name: str | None = None
    storage_class_name: str | None = None
    volume_mode: str | None = None


class PersistentVolumeClaimStatus(Model):
    """``phase``: Pending, Bound or Lost; ``capacity`` and ``accessModes`` of the bound volume."""

    phase: str | None = None
    access_modes: list[str] | None = None
    capacity: dict[str, str] | None = None
    conditions: list[Condition] | None = None


class PersistentVolumeClaim(TypedObject):
    """``corev1.PersistentVolumeClaim`` (namespaced): a user's request for storage."""

    spec: PersistentVolumeClaimSpec | None = None
    status: PersistentVolumeClaimStatus | None = None
