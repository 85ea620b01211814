"""PodSpec validation against Kubernetes 1.32's ``ValidatePodSpec``: the OS, DNS policy and config,
host aliases, readiness gates, names, node affinity, tolerations, AppArmor, probes and lifecycle
hooks, container restart rules and every volume source, with Kubernetes' field paths and messages
(for pods and for pod templates), and that valid manifests stay valid."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from minik8s.api import errors
from minik8s.apiserver.strategies.deployment import DeploymentStrategy
from minik8s.apiserver.strategies.pod import PodStrategy, default_pod_spec, validate_pod_spec

DNS_LABEL = ("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must "
             "start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for "
             "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')")
DNS_SUBDOMAIN = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
                 "and must start and end with an alphanumeric character (e.g. 'example.com', regex used for "
                 "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")
QUALIFIED = ("name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
             "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
             "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')")
ZERO_SLEEP = "Enable AllowPodLifecycleSleepActionZeroValue feature gate for zero sleep."
IP = "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"


def causes_of(extra: dict[str, Any], container: dict[str, Any] | None = None, path: str = "spec",
              init: dict[str, Any] | None = None) -> list[tuple[str, Any, str]]:
    """The causes of a defaulted PodSpec with one busybox container plus ``extra``."""
    c = {"name": "c", "image": "busybox", **(container or {})}
    spec: dict[str, Any] = {"containers": [c], **copy.deepcopy(extra)}
    if init is not None:
        spec["initContainers"] = [{"name": "i", "image": "busybox", **init}]
    default_pod_spec(spec)
    return validate_pod_spec(spec, path)


CASES: list[tuple[str, dict[str, Any], dict[str, Any] | None, list[tuple[str, Any, str]]]] = [
    ("os unsupported", {"os": {"name": "foo"}}, None,
     [("spec.os", None, 'Unsupported value: "foo": supported values: "linux", "windows"')]),
    ("os without name", {"os": {}}, None, [("spec.os.name", None, "Required value: cannot be empty")]),
    ("readiness gate", {"readinessGates": [{"conditionType": "bad type!"}]}, None,
     [("spec.readinessGates[0].conditionType", "bad type!", QUALIFIED)]),
    ("dns policy", {"dnsPolicy": "Cluster"}, None,
     [("spec.dnsPolicy", None, 'Unsupported value: "Cluster": supported values: "ClusterFirstWithHostNet", '
                               '"ClusterFirst", "Default", "None"')]),
    ("dns None without config", {"dnsPolicy": "None"}, None,
     [("spec.dnsConfig", None, "Required value: must provide `dnsConfig` when `dnsPolicy` is None")]),
    ("dns None without nameservers", {"dnsPolicy": "None", "dnsConfig": {"searches": ["a.b"]}}, None,
     [("spec.dnsConfig.nameservers", None,
       "Required value: must provide at least one DNS nameserver when `dnsPolicy` is None")]),
    ("dns nameserver", {"dnsConfig": {"nameservers": ["1.2.3.4", "dns.local"]}}, None,
     [("spec.dnsConfig.nameservers[1]", "dns.local", IP)]),
    ("dns too many nameservers", {"dnsConfig": {"nameservers": ["1.1.1.1", "2.2.2.2", "3.3.3.3", "::1"]}}, None,
     [("spec.dnsConfig.nameservers", None, 'Invalid value: []string{"1.1.1.1", "2.2.2.2", "3.3.3.3", "::1"}: '
                                           "must not have more than 3 nameservers")]),
    ("dns too many searches", {"dnsConfig": {"searches": [f"s{i}" for i in range(33)]}}, None,
     [("spec.dnsConfig.searches", None, "Invalid value: []string{" + ", ".join(f'"s{i}"' for i in range(33))
       + "}: must not have more than 32 search paths")]),
    ("dns search", {"dnsConfig": {"searches": ["ok.local.", "Bad_Domain"]}}, None,
     [("spec.dnsConfig.searches[1]", "Bad_Domain", DNS_SUBDOMAIN)]),
    ("dns option", {"dnsConfig": {"options": [{"name": "ndots", "value": "2"}, {"value": "1"}]}}, None,
     [("spec.dnsConfig.options[1]", None, "Required value: must not be empty")]),
    ("host alias ip", {"hostAliases": [{"ip": "notanip", "hostnames": ["ok"]}]}, None,
     [("spec.hostAliases[0].ip", "notanip", IP)]),
    ("host alias hostname", {"hostAliases": [{"ip": "10.0.0.1", "hostnames": ["ok", "Not_OK"]}]}, None,
     [("spec.hostAliases[0].hostnames[1]", "Not_OK", DNS_SUBDOMAIN)]),
    ("hostname", {"hostname": "Web_1"}, None, [("spec.hostname", "Web_1", DNS_LABEL)]),
    ("subdomain", {"subdomain": "a.b"}, None, [("spec.subdomain", "a.b", DNS_LABEL)]),
    ("service account", {"serviceAccountName": "Default"}, None,
     [("spec.serviceAccountName", "Default", DNS_SUBDOMAIN)]),
    ("runtime class", {"runtimeClassName": "RunC"}, None, [("spec.runtimeClassName", "RunC", DNS_SUBDOMAIN)]),
    ("active deadline", {"activeDeadlineSeconds": 0}, None,
     [("spec.activeDeadlineSeconds", 0, "must be between 1 and 2147483647, inclusive")]),
    ("share process namespace with hostPID", {"shareProcessNamespace": True, "hostPID": True}, None,
     [("spec.shareProcessNamespace", True, "ShareProcessNamespace and HostPID cannot both be enabled")]),
    ("net sysctl with hostNetwork", {"hostNetwork": True, "securityContext": {"sysctls": [
        {"name": "kernel.shm_rmid_forced", "value": "1"}, {"name": "net/ipv4/ip_local_port_range", "value": "1 2"}]}},
     None, [("spec.securityContext.sysctls[1].name", "net/ipv4/ip_local_port_range",
             "may not be specified when 'hostNetwork' is true")]),
    ("ipc sysctl with hostIPC",
     {"hostIPC": True, "securityContext": {"sysctls": [{"name": "kernel.msgmax", "value": "1"}]}},
     None, [("spec.securityContext.sysctls[0].name", "kernel.msgmax", "may not be specified when 'hostIPC' is true")]),
    ("node affinity no terms", {"affinity": {"nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": []}}}}, None,
     [("spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms", None,
       "Required value: must have at least one node selector term")]),
    ("node affinity requirement", {"affinity": {"nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": "zone", "operator": "In"}, {"key": "a", "operator": "Near"}],
             "matchFields": [{"key": "metadata.uid", "operator": "In", "values": ["x"]}]}]}}}}, None,
     [("spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]"
       ".matchExpressions[0].values", None, "Required value: must be specified when `operator` is 'In' or 'NotIn'"),
      ("spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]"
       ".matchExpressions[1].operator", "Near", "not a valid selector operator"),
      ("spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]"
       ".matchFields[0].key", "metadata.uid", "not a valid field selector key")]),
    ("node affinity weight", {"affinity": {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 0, "preference": {"matchExpressions": [{"key": "a", "operator": "Exists"}]}}]}}}, None,
     [("spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight", 0,
       "must be in the range 1-100")]),
    ("toleration seconds without NoExecute", {"tolerations": [{"key": "k", "operator": "Exists",
                                                               "effect": "NoSchedule", "tolerationSeconds": 5}]},
     None, [("spec.tolerations[0].effect", "NoSchedule",
             "effect must be 'NoExecute' when `tolerationSeconds` is set")]),
    ("toleration key", {"tolerations": [{"key": "bad key", "operator": "Exists"}]}, None,
     [("spec.tolerations[0].key", "bad key", QUALIFIED)]),
    ("pod apparmor", {"securityContext": {"appArmorProfile": {"type": "Localhost"}}}, None,
     [("spec.securityContext.appArmorProfile.localhostProfile", None,
       "Required value: must be set when AppArmor type is Localhost")]),
    ("container apparmor", {}, {"securityContext": {"appArmorProfile": {"type": "Strict"}}},
     [("spec.containers[0].securityContext.appArmorProfile.type", None,
       'Unsupported value: "Strict": supported values: "Localhost", "RuntimeDefault", "Unconfined"')]),
    ("sleep hook negative", {}, {"lifecycle": {"preStop": {"sleep": {"seconds": -1}}}},
     [("spec.containers[0].lifecycle.preStop.sleep", -1, "must be greater than 0 and less than "
       "terminationGracePeriodSeconds (30). " + ZERO_SLEEP)]),
    ("sleep hook above grace", {"terminationGracePeriodSeconds": 10},
     {"lifecycle": {"postStart": {"sleep": {"seconds": 11}}}},
     [("spec.containers[0].lifecycle.postStart.sleep", 11, "must be greater than 0 and less than "
       "terminationGracePeriodSeconds (10). " + ZERO_SLEEP)]),
    ("hook without handler", {}, {"lifecycle": {"preStop": {}}},
     [("spec.containers[0].lifecycle.preStop", None, "Required value: must specify a handler type")]),
    ("hook with three handlers", {},
     {"lifecycle": {"preStop": {"exec": {"command": ["x"]}, "tcpSocket": {}, "sleep": {"seconds": -1}}}},
     [("spec.containers[0].lifecycle.preStop.tcpSocket", None, "Forbidden: may not specify more than 1 handler type"),
      ("spec.containers[0].lifecycle.preStop.sleep", None, "Forbidden: may not specify more than 1 handler type")]),
    ("exec without command", {}, {"livenessProbe": {"exec": {}}},
     [("spec.containers[0].livenessProbe.exec.command", None, "Required value")]),
    ("http hook", {}, {"lifecycle": {"postStart": {"httpGet": {"port": "Web", "scheme": "FTP",
                                                              "httpHeaders": [{"name": "X Bad", "value": "1"}]}}}},
     [("spec.containers[0].lifecycle.postStart.httpGet.port", "Web",
       "must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)"),
      ("spec.containers[0].lifecycle.postStart.httpGet.scheme", None,
       'Unsupported value: "FTP": supported values: "HTTP", "HTTPS"'),
      ("spec.containers[0].lifecycle.postStart.httpGet.httpHeaders", "X Bad",
       "a valid HTTP header must consist of alphanumeric characters or '-' (e.g. 'X-Header-Name', regex used for "
       "validation is '[-A-Za-z0-9]+')")]),
    ("tcp probe without port", {}, {"readinessProbe": {"tcpSocket": {}}},
     [("spec.containers[0].readinessProbe.tcpSocket.port", 0, "must be between 1 and 65535, inclusive")]),
    ("readiness probe grace", {}, {"readinessProbe": {"exec": {"command": ["x"]}, "terminationGracePeriodSeconds": 5}},
     [("spec.containers[0].readinessProbe.terminationGracePeriodSeconds", 5, "must not be set for readinessProbes")]),
    ("startup probe threshold", {}, {"startupProbe": {"exec": {"command": ["x"]}, "successThreshold": 2}},
     [("spec.containers[0].startupProbe.successThreshold", 2, "must be 1")]),
    ("termination message policy", {}, {"terminationMessagePolicy": "Logs"},
     [("spec.containers[0].terminationMessagePolicy", None,
       'Unsupported value: "Logs": supported values: "File", "FallbackToLogsOnError"')]),
    ("restart policy on a container", {}, {"restartPolicy": "Always"},
     [("spec.containers[0].restartPolicy", None, "Forbidden: may not be set for non-init containers")]),
    ("image whitespace", {}, {"image": " busybox"},
     [("spec.containers[0].image", " busybox", "must not have leading or trailing whitespace")]),
]

VOLUME_CASES: list[tuple[dict[str, Any], list[tuple[str, Any, str]]]] = [
    ({"awsElasticBlockStore": {}}, [("spec.volumes[0].awsElasticBlockStore.volumeID", None, "Required value")]),
    ({"awsElasticBlockStore": {"volumeID": "v", "partition": 300}},
     [("spec.volumes[0].awsElasticBlockStore.partition", 300, "must be between 1 and 255, inclusive")]),
    ({"gcePersistentDisk": {}}, [("spec.volumes[0].persistentDisk.pdName", None, "Required value")]),  # sic
    ({"csi": {}}, [("spec.volumes[0].csi.driver", None, "Required value"),  # and, as Kubernetes, the regex
                   ("spec.volumes[0].csi.driver", "", DNS_SUBDOMAIN)]),
    ({"csi": {"driver": "Bad_Driver"}}, [("spec.volumes[0].csi.driver", "Bad_Driver", DNS_SUBDOMAIN)]),
    ({"csi": {"driver": "csi.example.com", "nodePublishSecretRef": {}}},
     [("spec.volumes[0].csi.nodePublishSecretRef.name", None, "Required value")]),
    ({"ephemeral": {}}, [("spec.volumes[0].ephemeral.volumeClaimTemplate", None, "Required value")]),
    ({"ephemeral": {"volumeClaimTemplate": {"spec": {"accessModes": ["ReadWriteOnce"]}}}},
     [("spec.volumes[0].ephemeral.volumeClaimTemplate.spec.resources[storage]", None, "Required value")]),
    ({"hostPath": {"path": "/a/../b", "type": "Dir"}},
     [("spec.volumes[0].hostPath.path", "/a/../b", "must not contain '..'"),
      ("spec.volumes[0].hostPath.type", None, 'Unsupported value: "Dir": supported values: "", "BlockDevice", '
       '"CharDevice", "Directory", "DirectoryOrCreate", "File", "FileOrCreate", "Socket"')]),
    ({"emptyDir": {"sizeLimit": "-1Gi"}},
     [("spec.volumes[0].emptyDir.sizeLimit", None, "Forbidden: SizeLimit field must be a valid resource quantity")]),
    ({"gitRepo": {"directory": "../x"}}, [("spec.volumes[0].gitRepo.repository", None, "Required value"),
                                          ("spec.volumes[0].gitRepo.directory", "../x", "must not contain '..'")]),
    ({"iscsi": {"targetPortal": "1.2.3.4:3260", "iqn": "foo", "lun": 256}},
     [("spec.volumes[0].iscsi.iqn", "foo", "must be valid format starting with iqn, eui, or naa"),
      ("spec.volumes[0].iscsi.lun", 256, "must be between 0 and 255, inclusive")]),
    ({"iscsi": {"targetPortal": "p", "iqn": "iqn.2001-04.com.example:storage", "chapAuthSession": True}},
     [("spec.volumes[0].iscsi.secretRef", None, "Required value")]),
    ({"glusterfs": {}}, [("spec.volumes[0].glusterfs.endpoints", None, "Required value"),
                         ("spec.volumes[0].glusterfs.path", None, "Required value")]),
    ({"rbd": {"monitors": []}}, [("spec.volumes[0].rbd.monitors", None, "Required value"),
                                 ("spec.volumes[0].rbd.image", None, "Required value")]),
    ({"cephfs": {}}, [("spec.volumes[0].cephfs.monitors", None, "Required value")]),
    ({"cinder": {"volumeID": "v", "secretRef": {}}},
     [("spec.volumes[0].cinder.secretRef.name", None, "Required value")]),
    ({"fc": {}}, [("spec.volumes[0].fc.targetWWNs", None,
                   "Required value: must specify either targetWWNs or wwids, but not both")]),
    ({"fc": {"targetWWNs": ["500a0982991b8dc5"]}},
     [("spec.volumes[0].fc.lun", None, "Required value: lun is required if targetWWNs is specified")]),
    ({"flocker": {}},
     [("spec.volumes[0].flocker", None, "Required value: one of datasetName and datasetUUID is required")]),
    ({"azureFile": {}}, [("spec.volumes[0].azureFile.secretName", None, "Required value"),
                         ("spec.volumes[0].azureFile.shareName", None, "Required value")]),
    ({"azureDisk": {"diskName": "d", "diskURI": "d.vhd", "cachingMode": "All"}},
     [("spec.volumes[0].azureDisk.cachingMode", None,
       'Unsupported value: "All": supported values: "None", "ReadOnly", "ReadWrite"'),
      ("spec.volumes[0].azureDisk.diskURI", None, 'Unsupported value: "d.vhd": supported values: '
       '"https://{account-name}.blob.core.windows.net/{container-name}/{disk-name}.vhd"')]),
    ({"vsphereVolume": {}}, [("spec.volumes[0].vsphereVolume.volumePath", None, "Required value")]),
    ({"quobyte": {}}, [("spec.volumes[0].quobyte.registry", None,
                        "Required value: must be a host:port pair or multiple pairs separated by commas"),
                       ("spec.volumes[0].quobyte.volume", None, "Required value")]),
    ({"quobyte": {"registry": "reg:7861,reg2", "volume": "v"}},
     [("spec.volumes[0].quobyte.registry", "reg:7861,reg2",
       "must be a host:port pair or multiple pairs separated by commas")]),
    ({"flexVolume": {"options": {"kubernetes.io/x": "1", "example.com/y": "2"}}},
     [("spec.volumes[0].flexVolume.driver", None, "Required value"),
      ("spec.volumes[0].flexVolume.options[kubernetes.io/x]", "kubernetes.io/x",
       "kubernetes.io and k8s.io namespaces are reserved")]),
    ({"iscsi": {"targetPortal": "10.0.0.1:3260", "iqn": "iqn.2001-04.com.example:disk", "initiatorName": "x"}},
     [("spec.volumes[0].iscsi.initiatorname", "x", "must be valid format starting with iqn, eui, or naa")]),
    ({"photonPersistentDisk": {}}, [("spec.volumes[0].photonPersistentDisk.pdID", None, "Required value")]),
    ({"portworxVolume": {}}, [("spec.volumes[0].portworxVolume.volumeID", None, "Required value")]),
    ({"scaleIO": {}}, [("spec.volumes[0].scaleIO.gateway", None, "Required value"),
                       ("spec.volumes[0].scaleIO.system", None, "Required value"),
                       ("spec.volumes[0].scaleIO.volumeName", None, "Required value")]),
    ({"storageos": {}}, [("spec.volumes[0].storageos.volumeName", None, "Required value")]),
    ({"emptyDir": {}, "awsElasticBlockStore": {"volumeID": "v"}},
     [("spec.volumes[0].awsElasticBlockStore", None, "Forbidden: may not specify more than 1 volume type")]),
    ({"hostPath": {"path": "/x"}, "cephfs": {}, "csi": {}},  # the first's fields only; Kubernetes' cephFS
     [("spec.volumes[0].cephFS", None, "Forbidden: may not specify more than 1 volume type"),
      ("spec.volumes[0].csi", None, "Forbidden: may not specify more than 1 volume type")]),
]


@pytest.mark.parametrize(("extra", "container", "expected"), [case[1:] for case in CASES],
                         ids=[case[0] for case in CASES])
def test_kubernetes_refuses(extra: dict[str, Any], container: dict[str, Any] | None,
                            expected: list[tuple[str, Any, str]]) -> None:
    assert causes_of(extra, container) == expected


@pytest.mark.parametrize(("source", "expected"), VOLUME_CASES, ids=[next(iter(c[0])) for c in VOLUME_CASES])
def test_volume_sources(source: dict[str, Any], expected: list[tuple[str, Any, str]]) -> None:
    assert causes_of({"volumes": [{"name": "v", **source}]}) == expected


def test_init_container_restart_rules() -> None:
    """Only ``restartPolicy: Always`` (a sidecar) on init containers; without it no hooks nor probes."""
    assert causes_of({}, init={"restartPolicy": "Never"}) == [
        ("spec.initContainers[0].restartPolicy", None, 'Unsupported value: "Never": supported values: "Always"')]
    assert causes_of({}, init={"livenessProbe": {"exec": {"command": ["x"]}}}) == [
        ("spec.initContainers[0].livenessProbe", None,
         "Forbidden: may not be set for init containers without restartPolicy=Always")]
    sidecar = {"restartPolicy": "Always", "readinessProbe": {"exec": {"command": ["x"]}},
               "lifecycle": {"preStop": {"sleep": {"seconds": 5}}}}
    assert causes_of({}, init=sidecar) == []


def test_template_paths() -> None:
    """A pod template's spec is checked with its own paths; whitespace around an image is allowed there."""
    path = "spec.template.spec"
    assert causes_of({"os": {"name": "foo"}, "hostAliases": [{"ip": "x"}]}, {"image": "busybox "}, path) == [
        (f"{path}.os", None, 'Unsupported value: "foo": supported values: "linux", "windows"'),
        (f"{path}.hostAliases[0].ip", "x", IP)]
    deployment = {"metadata": {"name": "d"}, "spec": {
        "selector": {"matchLabels": {"a": "b"}},
        "template": {"metadata": {"labels": {"a": "b"}}, "spec": {
            "containers": [{"name": "c", "image": "busybox"}], "readinessGates": [{"conditionType": "x y"}]}}}}
    strategy = DeploymentStrategy()
    strategy.default(deployment)
    assert ("spec.template.spec.readinessGates[0].conditionType", "x y", QUALIFIED) in strategy.validate(deployment,
                                                                                                        None)


def test_message_as_kubernetes_prints_it() -> None:
    spec = {"containers": [{"name": "c", "image": "busybox"}], "hostAliases": [{"ip": "notanip"}]}
    pod = {"metadata": {"name": "p", "namespace": "default"}, "spec": spec}
    strategy = PodStrategy()
    strategy.default(pod)
    err = errors.invalid("Pod", "p", strategy.validate(pod, None))
    assert str(err) == ('Pod "p" is invalid: spec.hostAliases[0].ip: Invalid value: "notanip": must be a valid IP '
                        "address, (e.g. 10.9.8.7 or 2001:db8::ffff)")


VALID = {
    "os": {"name": "linux"},
    "dnsPolicy": "None",
    "dnsConfig": {"nameservers": ["1.1.1.1", "010.0.0.10", "2001:db8::1"], "searches": ["svc.cluster.local."],
                  "options": [{"name": "ndots", "value": "2"}, {"name": "edns0"}]},
    "hostAliases": [{"ip": "127.0.0.1", "hostnames": ["foo.local", "bar"]}],
    "readinessGates": [{"conditionType": "example.com/feature-1"}],
    "hostname": "web-0", "subdomain": "web", "serviceAccountName": "default", "nodeName": "node-1.example",
    "activeDeadlineSeconds": 60, "shareProcessNamespace": True,
    "tolerations": [{"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute",
                     "tolerationSeconds": 300}, {"operator": "Exists"}],
    "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "kubernetes.io/os", "operator": "In", "values": ["linux"]},
                              {"key": "gpu", "operator": "DoesNotExist"}, {"key": "cores", "operator": "Gt",
                                                                          "values": ["4"]}],
         "matchFields": [{"key": "metadata.name", "operator": "NotIn", "values": ["node-2"]}]}]},
        "preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 100,
             "preference": {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}}]}},
    "securityContext": {"appArmorProfile": {"type": "RuntimeDefault"}},
    "initContainers": [{"name": "sidecar", "image": "busybox", "restartPolicy": "Always",
                        "startupProbe": {"grpc": {"port": 9000}}}],
    "volumes": [
        {"name": "aws", "awsElasticBlockStore": {"volumeID": "vol-1", "partition": 1}},
        {"name": "csi", "csi": {"driver": "csi.example.com", "volumeAttributes": {"a": "b"}}},
        {"name": "eph", "ephemeral": {"volumeClaimTemplate": {"metadata": {"labels": {"a": "b"}}, "spec": {
            "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}}},
        {"name": "git", "gitRepo": {"repository": "https://example.com/r.git", "directory": "."}},
        {"name": "iscsi", "iscsi": {"targetPortal": "10.0.0.1:3260", "iqn": "iqn.2001-04.com.example:storage.disk1",
                                    "lun": 0}},
        {"name": "fc", "fc": {"targetWWNs": ["500a0982991b8dc5"], "lun": 2}},
        {"name": "azure", "azureDisk": {"diskName": "d", "diskURI": "https://a.blob.core.windows.net/c/d.vhd"}},
        {"name": "managed", "azureDisk": {"diskName": "d", "kind": "Managed",
                                          "diskURI": "/subscriptions/s/resourceGroups/g/providers/x/disks/d"}},
        {"name": "host", "hostPath": {"path": "/var/log", "type": "DirectoryOrCreate"}},
        {"name": "rbd", "rbd": {"monitors": ["10.0.0.1:6789"], "image": "img"}},
        {"name": "sized", "emptyDir": {"sizeLimit": "1Gi", "medium": "Memory"}},
    ],
}


def test_valid_manifest_stays_valid() -> None:
    container = {"livenessProbe": {"httpGet": {"port": "http", "httpHeaders": [{"name": "X-Probe", "value": "1"}]},
                                   "terminationGracePeriodSeconds": 10},
                 "readinessProbe": {"tcpSocket": {"port": 8080}},
                 "ports": [{"name": "http", "containerPort": 8080}],
                 "lifecycle": {"postStart": {"httpGet": {"port": 8080}}, "preStop": {"sleep": {"seconds": 30}}},
                 "terminationMessagePolicy": "FallbackToLogsOnError",
                 "securityContext": {"appArmorProfile": {"type": "Localhost", "localhostProfile": "k8s-profile"}}}
    assert causes_of(VALID, container) == []


def test_source_defaults() -> None:
    """Kubernetes' stored defaults of the sources whose validation depends on them."""
    spec: dict[str, Any] = {"containers": [{"name": "c", "image": "i", "lifecycle": {"preStop": {"httpGet": {
        "port": 80}}}}], "volumes": [{"name": "a", "azureDisk": {"diskName": "d", "diskURI": "https://x"}},
                                      {"name": "r", "rbd": {"monitors": ["m"], "image": "i"}},
                                      {"name": "t"}]}
    default_pod_spec(spec)
    assert spec["volumes"][0]["azureDisk"] == {"diskName": "d", "diskURI": "https://x", "cachingMode": "ReadWrite",
                                               "fsType": "ext4", "readOnly": False, "kind": "Shared"}
    assert spec["volumes"][1]["rbd"]["pool"] == "rbd" and spec["volumes"][1]["rbd"]["user"] == "admin"
    assert spec["volumes"][2] == {"name": "t", "emptyDir": {}}
    assert spec["containers"][0]["lifecycle"]["preStop"]["httpGet"] == {"port": 80, "path": "/", "scheme": "HTTP"}


def test_host_ports() -> None:
    """One host port per address and protocol; with ``hostNetwork`` a host port is the container port."""
    ports = [{"containerPort": 80, "hostPort": 8080}, {"containerPort": 81, "hostPort": 8080}]
    assert causes_of({}, {"ports": ports}) == [
        ("spec.containers[0].ports[1].hostPort", None, 'Duplicate value: "TCP//8080"')]
    assert causes_of({"hostNetwork": True}, {"ports": [{"containerPort": 80, "hostPort": 8080}]}) == [
        ("spec.containers[0].ports[0].hostPort", 8080, "must match `containerPort` when `hostNetwork` is true")]
    assert causes_of({"hostNetwork": True}, {"ports": [{"containerPort": 80, "hostPort": 80}, {"containerPort": 81},
                                                       {"containerPort": 80, "protocol": "UDP", "hostPort": 80}]}) == []


def test_env_field_refs() -> None:
    """``env[].valueFrom.fieldRef`` names a field the kubelet can expose (apiVersion defaults to v1)."""
    env = [{"name": "A", "valueFrom": {"fieldRef": {"fieldPath": "status.podIPs"}}},
           {"name": "B", "valueFrom": {"fieldRef": {"fieldPath": "metadata.labels['app']"}}},
           {"name": "C", "valueFrom": {"fieldRef": {"fieldPath": "status.phase"}}}]
    assert causes_of({}, {"env": env}) == [
        ("spec.containers[0].env[2].valueFrom.fieldRef.fieldPath", None,
         'Unsupported value: "status.phase": supported values: "metadata.name", "metadata.namespace", '
         '"metadata.uid", "spec.nodeName", "spec.serviceAccountName", "status.hostIP", "status.hostIPs", '
         '"status.podIP", "status.podIPs"')]
