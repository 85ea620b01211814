"""``kubectl`` (minik8s.kubectl) driven as a real subprocess against the real apiserver and etcd.

Every call runs ``python -m minik8s.kubectl --kubeconfig <tmp> ...`` so exit codes, stdout and
stderr are exactly what a user sees. Pods stay Pending (no scheduler or kubelet here).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from minik8s.client.kubeconfig import render
from minik8s.client.rest import Client
from tests.support.kubectl import Kubectl, Result, assert_one_error_line
from tests.support.processes import ROOT

LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"





def pod_yaml(name: str, labels: dict[str, str] | None = None, image: str = "busybox",
             namespace: str | None = None) -> str:
    meta: dict[str, Any] = {"name": name}
    if labels:
        meta["labels"] = labels
    if namespace:
        meta["namespace"] = namespace
    return yaml.safe_dump({"apiVersion": "v1", "kind": "Pod", "metadata": meta,
                           "spec": {"containers": [{"name": "main", "image": image,
                                                    "ports": [{"containerPort": 80}]}]}})




async def pod_names(client: Client, namespace: str) -> list[str]:
    listed = await client.list(client.kind("v1", "Pod"), namespace)
    return sorted(p["metadata"]["name"] for p in listed["items"])


# ---------------------------------------------------------------------------------- version / discovery
def test_version(kubectl: Kubectl) -> None:
    res = kubectl.ok("version", ns=False)
    assert res.lines[0] == "Client Version: minik8s 0.1.0"
    assert res.lines[1].startswith("Server Version: v1.32.0")
    client_only = kubectl.ok("version", "--client", ns=False, kubeconfig=False)
    assert client_only.lines == ["Client Version: minik8s 0.1.0"]
    doc = json.loads(kubectl.ok("version", "-o", "json", ns=False).out)
    assert doc["serverVersion"]["major"] == "1"


def test_api_resources(kubectl: Kubectl) -> None:
    res = kubectl.ok("api-resources", ns=False)
    rows = res.table()
    assert rows[0] == ["NAME", "SHORTNAMES", "APIVERSION", "NAMESPACED", "KIND"]
    assert ["pods", "po", "v1", "true", "Pod"] in rows
    assert ["namespaces", "ns", "v1", "false", "Namespace"] in rows
    assert any(r[0] == "leases" and r[-3:] == ["coordination.k8s.io/v1", "true", "Lease"] for r in rows)
    assert not any("/" in r[0] for r in rows), "subresources are omitted"
    assert res.lines[0].startswith("NAME   ") or res.lines[0].startswith("NAME        ")
    names = kubectl.ok("api-resources", "-o", "name", "--namespaced=false", ns=False).lines
    assert "namespaces" in names and "pods" not in names


# ---------------------------------------------------------------------------------- apply / create
async def test_apply_created_configured_unchanged(kubectl: Kubectl, client: Client, namespace: str,
                                                  tmp_path: Path) -> None:
    manifest = tmp_path / "web.yaml"
    manifest.write_text(pod_yaml("web", {"app": "web", "tier": "front"}))
    assert kubectl.ok("apply", "-f", str(manifest)).out == "pod/web created\n"
    assert kubectl.ok("apply", "-f", str(manifest)).out == "pod/web unchanged\n"

    pod_rt = client.kind("v1", "Pod")
    live = await client.get(pod_rt, "web", namespace)
    applied = json.loads(live["metadata"]["annotations"][LAST_APPLIED])
    assert applied["metadata"]["name"] == "web" and applied["metadata"]["namespace"] == namespace
    assert applied["spec"]["containers"][0]["image"] == "busybox"
    rv = live["metadata"]["resourceVersion"]

    # someone else adds a label: apply leaves it alone (it was never in the manifest)
    await client.patch(pod_rt, "web", {"metadata": {"labels": {"owner": "ops"}}}, namespace)
    assert kubectl.ok("apply", "-f", str(manifest)).out == "pod/web unchanged\n"

    # change an allowed field and drop a label: configured; the dropped label is removed
    manifest.write_text(pod_yaml("web", {"app": "web"}, image="busybox:2"))
    assert kubectl.ok("apply", "-f", str(manifest)).out == "pod/web configured\n"
    live = await client.get(pod_rt, "web", namespace)
    assert live["metadata"]["labels"] == {"app": "web", "owner": "ops"}
    assert live["spec"]["containers"][0]["image"] == "busybox:2"
    assert live["metadata"]["resourceVersion"] != rv
    assert json.loads(live["metadata"]["annotations"][LAST_APPLIED])["metadata"]["labels"] == {"app": "web"}
    assert kubectl.ok("apply", "-f", str(manifest)).out == "pod/web unchanged\n"


async def test_apply_object_created_without_annotation(kubectl: Kubectl, client: Client, namespace: str,
                                                       tmp_path: Path) -> None:
    manifest = tmp_path / "p.yaml"
    manifest.write_text(pod_yaml("plain", {"app": "plain"}))
    assert kubectl.ok("create", "-f", str(manifest)).out == "pod/plain created\n"
    res = kubectl.ok("apply", "-f", str(manifest))
    assert res.out == "pod/plain configured\n"
    assert "missing the kubectl.kubernetes.io/last-applied-configuration annotation" in res.err
    live = await client.get(client.kind("v1", "Pod"), "plain", namespace)
    assert LAST_APPLIED in live["metadata"]["annotations"]
    assert kubectl.ok("apply", "-f", str(manifest)).out == "pod/plain unchanged\n"


async def test_create_already_exists_continues(kubectl: Kubectl, client: Client, namespace: str,
                                               tmp_path: Path) -> None:
    kubectl.ok("create", "-f", "-", stdin=pod_yaml("one"))
    both = tmp_path / "both.yaml"
    both.write_text(pod_yaml("one") + "---\n" + pod_yaml("two"))
    res = kubectl("create", "-f", str(both))
    assert res.code == 1
    assert res.out == "pod/two created\n"
    assert res.err.strip() == (f'Error from server (AlreadyExists): error when creating "{both}": '
                               'pods "one" already exists')
    assert await pod_names(client, namespace) == ["one", "two"]
    saved = kubectl.ok("create", "--save-config", "-f", "-", stdin=pod_yaml("three"))
    assert saved.out == "pod/three created\n"
    assert kubectl.ok("apply", "-f", "-", stdin=pod_yaml("three")).out == "pod/three unchanged\n"


async def test_create_namespace_and_cluster_scoped_names(kubectl: Kubectl, client: Client) -> None:
    name = f"kc-{os.urandom(3).hex()}"
    assert kubectl.ok("create", "namespace", name, ns=False).out == f"namespace/{name} created\n"
    res = kubectl.ok("get", "ns", name, ns=False)
    assert res.table()[0] == ["NAME", "STATUS", "AGE"]
    assert res.table()[1][:2] == [name, "Active"]
    assert kubectl.ok("delete", "ns", name, ns=False).out == f'namespace "{name}" deleted\n'
    assert kubectl("get", "ns", name, ns=False).code == 1  # --wait: really gone


async def test_multidoc_directory_list_and_stdin(kubectl: Kubectl, client: Client, namespace: str,
                                                 tmp_path: Path) -> None:
    folder = tmp_path / "manifests"
    (folder / "nested").mkdir(parents=True)
    (folder / "b.yaml").write_text(pod_yaml("b1") + "---\n# comment only\n---\n" + pod_yaml("b2"))
    listing = {"apiVersion": "v1", "kind": "List", "items": [
        yaml.safe_load(pod_yaml("a1")), yaml.safe_load(pod_yaml("a2"))]}
    (folder / "a.json").write_text(json.dumps(listing))
    (folder / "notes.txt").write_text("not a manifest: [")
    (folder / "nested" / "c.yml").write_text(pod_yaml("c1"))
    res = kubectl.ok("apply", "-f", str(folder))
    assert res.lines == ["pod/a1 created", "pod/a2 created", "pod/b1 created", "pod/b2 created"]
    res = kubectl.ok("apply", "-R", "-f", str(folder))
    assert res.lines[-1] == "pod/c1 created" and res.lines.count("pod/a1 unchanged") == 1
    single_json = json.dumps(yaml.safe_load(pod_yaml("s1")))
    assert kubectl.ok("apply", "-f", "-", stdin=single_json).out == "pod/s1 created\n"
    assert kubectl.ok("create", "-f", "-", stdin=pod_yaml("s2")).out == "pod/s2 created\n"
    assert await pod_names(client, namespace) == ["a1", "a2", "b1", "b2", "c1", "s1", "s2"]


async def test_apply_uses_manifest_namespace_and_kubeconfig_namespace(kubectl: Kubectl, client: Client,
                                                                      namespace: str, tmp_path: Path) -> None:
    # no -n: the manifest's namespace wins; without one, the kubeconfig context's namespace
    kubectl.ok("apply", "-f", "-", stdin=pod_yaml("explicit", namespace=namespace), ns=False)
    doc = yaml.safe_load(kubectl.kubeconfig.read_text())
    doc["contexts"][0]["context"]["namespace"] = namespace
    own = tmp_path / "ns-kubeconfig"
    own.write_text(yaml.safe_dump(doc))
    other = Kubectl(own, namespace)
    other.ok("apply", "-f", "-", stdin=pod_yaml("implicit"), ns=False)
    assert await pod_names(client, namespace) == ["explicit", "implicit"]
    assert [r[0] for r in other.ok("get", "pods", ns=False).table()[1:]] == ["explicit", "implicit"]


# ---------------------------------------------------------------------------------- get
async def test_get_tables_and_formats(kubectl: Kubectl, client: Client, namespace: str) -> None:
    kubectl.ok("apply", "-f", "-", stdin=pod_yaml("web", {"app": "web"}) + "---\n" + pod_yaml("db", {"app": "db"}))

    table = kubectl.ok("get", "pods")
    assert table.lines[0].split() == ["NAME", "READY", "STATUS", "RESTARTS", "AGE"]
    assert table.lines[0].startswith("NAME   READY   STATUS    RESTARTS   AGE")
    rows = table.table()[1:]
    assert [r[0] for r in rows] == ["db", "web"]
    assert rows[0][1:4] == ["0/1", "Pending", "0"]
    assert re.fullmatch(r"\d+s", rows[0][4])

    wide = kubectl.ok("get", "pods", "-o", "wide").table()
    assert wide[0][:7] == ["NAME", "READY", "STATUS", "RESTARTS", "AGE", "IP", "NODE"]
    assert wide[1][5:7] == ["<none>", "<none>"]

    assert kubectl.ok("get", "pods", "-o", "name").lines == ["pod/db", "pod/web"]
    assert kubectl.ok("get", "po", "-l", "app=web", "-o", "name").lines == ["pod/web"]
    assert kubectl.ok("get", "Pod", "--field-selector", "metadata.name=db", "-o", "name").lines == ["pod/db"]
    assert kubectl.ok("get", "pods.v1", "web", "-o", "name").lines == ["pod/web"]
    assert kubectl.ok("get", "pod/web", "pod/db", "-o", "name").lines == ["pod/web", "pod/db"]

    one = yaml.safe_load(kubectl.ok("get", "pod", "web", "-o", "yaml").out)
    assert one["kind"] == "Pod" and one["metadata"]["name"] == "web"
    many = json.loads(kubectl.ok("get", "pods", "-o", "json").out)
    assert many["kind"] == "List" and [i["metadata"]["name"] for i in many["items"]] == ["db", "web"]
    assert kubectl.ok("get", "pod", "web", "-o", "jsonpath={.metadata.labels.app}").out == "web"
    assert kubectl.ok("get", "pods", "-o", "jsonpath={.items[*].metadata.name}").out == "db web"

    labels = kubectl.ok("get", "pods", "--show-labels").table()
    assert labels[0][-1] == "LABELS" and labels[1][-1] == "app=db"
    cols = kubectl.ok("get", "pods", "-L", "app").table()
    assert cols[0][-1] == "APP" and cols[2][-1] == "web"

    everywhere = kubectl.ok("get", "pods", "-A", ns=False).table()
    assert everywhere[0][:2] == ["NAMESPACE", "NAME"]
    assert [namespace, "web"] in [r[:2] for r in everywhere]

    mixed = kubectl.ok("get", "pods,ns", "-o", "name").lines
    assert "pod/web" in mixed and "namespace/default" in mixed
    mixed_table = kubectl.ok("get", "pods,ns").out
    assert "\n\nNAME" in mixed_table and "pod/web" in mixed_table and "namespace/default" in mixed_table

    empty = kubectl.ok("get", "pods", "-l", "app=nothing")
    assert empty.out == "" and empty.err.strip() == f"No resources found in {namespace} namespace."

    missing = kubectl("get", "pod", "nope")
    assert_one_error_line(missing)
    assert missing.err.strip() == 'Error from server (NotFound): pods "nope" not found'
    partial = kubectl("get", "pods", "web", "nope", "-o", "name")
    assert partial.code == 1 and partial.out == "pod/web\n" and 'pods "nope" not found' in partial.err


async def test_get_nodes_leases_and_events(kubectl: Kubectl, client: Client, namespace: str) -> None:
    node_name = f"node-{os.urandom(3).hex()}"
    node_rt = client.kind("v1", "Node")
    node = await client.create(node_rt, {"metadata": {"name": node_name, "labels": {
        "node-role.kubernetes.io/worker": "", "kubernetes.io/hostname": node_name}},
        "spec": {"unschedulable": True}})
    node["status"] = {
        "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady",
                        "lastHeartbeatTime": "2026-01-01T00:00:00Z", "lastTransitionTime": "2026-01-01T00:00:00Z"}],
        "addresses": [{"type": "InternalIP", "address": "10.9.8.7"}],
        "capacity": {"cpu": "4", "memory": "8Gi", "pods": "110"},
        "allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"},
        "nodeInfo": {"kubeletVersion": "v1.32.0-minik8s", "osImage": "Debian GNU/Linux 12 (bookworm)",
                     "kernelVersion": "6.1.0", "containerRuntimeVersion": "docker://24.0.5",
                     "operatingSystem": "linux", "architecture": "amd64"}}
    await client.update_status(node_rt, node)
    try:
        rows = kubectl.ok("get", "nodes", node_name, ns=False).table()
        assert rows[0] == ["NAME", "STATUS", "ROLES", "AGE", "VERSION"]
        assert rows[1][:3] == [node_name, "Ready,SchedulingDisabled", "worker"]
        assert rows[1][4] == "v1.32.0-minik8s"
        wide = kubectl.ok("get", "no", node_name, "-o", "wide", ns=False).table()
        assert wide[0][5:] == ["INTERNAL-IP", "EXTERNAL-IP", "OS-IMAGE", "KERNEL-VERSION", "CONTAINER-RUNTIME"]
        assert wide[1][5:] == ["10.9.8.7", "<none>", "Debian GNU/Linux 12 (bookworm)", "6.1.0", "docker://24.0.5"]

        described = kubectl.ok("describe", "node", node_name, ns=False).out
        for fragment in (f"Name:               {node_name}", "Roles:              worker",
                         "Unschedulable:      true", "InternalIP:  10.9.8.7", "Kubelet Version:",
                         "Non-terminated Pods:", "Allocated resources:", "Events:"):
            assert fragment in described, (fragment, described)
    finally:
        await client.delete(node_rt, node_name)

    lease_rt = client.kind("coordination.k8s.io/v1", "Lease")
    await client.create(lease_rt, {"metadata": {"name": "leader"}, "spec": {"holderIdentity": "node-a"}}, namespace)
    leases = kubectl.ok("get", "leases.coordination.k8s.io").table()
    assert leases[0] == ["NAME", "HOLDER", "AGE"] and leases[1][:2] == ["leader", "node-a"]
    generic = kubectl.ok("describe", "lease", "leader").out
    assert "Name:         leader" in generic and "Holder Identity:  node-a" in generic
    assert "API Version:  coordination.k8s.io/v1" in generic

    kubectl.ok("apply", "-f", "-", stdin=pod_yaml("web"))
    await client.create(client.kind("v1", "Event"), {
        "metadata": {"name": "web.1"}, "type": "Warning", "reason": "FailedScheduling",
        "message": "0/0 nodes are available", "involvedObject": {"kind": "Pod", "name": "web",
                                                                  "namespace": namespace},
        "source": {"component": "default-scheduler"}, "count": 1}, namespace)
    events = kubectl.ok("get", "events").table()
    assert events[0] == ["LAST SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"]
    assert events[1][1:] == ["Warning", "FailedScheduling", "pod/web", "0/0 nodes are available"]


async def test_get_watch(kubectl: Kubectl, client: Client, namespace: str) -> None:
    cmd = [sys.executable, "-m", "minik8s.kubectl", "--kubeconfig", str(kubectl.kubeconfig), "get", "pods",
           "-w", "-n", namespace]
    kubectl.ok("apply", "-f", "-", stdin=pod_yaml("first"))
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().split() == ["NAME", "READY", "STATUS", "RESTARTS", "AGE"]
        assert proc.stdout.readline().split()[:3] == ["first", "0/1", "Pending"]
        kubectl.ok("apply", "-f", "-", stdin=pod_yaml("second"))
        line = proc.stdout.readline()
        assert line.split()[:3] == ["second", "0/1", "Pending"]
        assert proc.poll() is None
    finally:
        proc.terminate()
        proc.wait(10)


# ---------------------------------------------------------------------------------- describe
async def test_describe_pod_with_events(kubectl: Kubectl, client: Client, namespace: str) -> None:
    manifest = {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "web", "labels": {"app": "web"}, "annotations": {"team": "blue"}},
        "spec": {
            "nodeSelector": {"disk": "ssd"},
            "tolerations": [{"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute",
                             "tolerationSeconds": 300}],
            "volumes": [{"name": "scratch", "emptyDir": {}}],
            "containers": [{
                "name": "app", "image": "busybox", "command": ["sh", "-c"], "args": ["sleep 3600"],
                "ports": [{"containerPort": 8080}],
                "env": [{"name": "MODE", "value": "prod"}],
                "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}, "limits": {"memory": "128Mi"}},
                "readinessProbe": {"httpGet": {"path": "/ready", "port": 8080}},
                "volumeMounts": [{"name": "scratch", "mountPath": "/scratch"}],
            }],
        },
    }
    kubectl.ok("apply", "-f", "-", stdin=json.dumps(manifest))
    pod = await client.get(client.kind("v1", "Pod"), "web", namespace)
    await client.create(client.kind("v1", "Event"), {
        "metadata": {"name": "web.abc"}, "type": "Normal", "reason": "Pulling",
        "message": 'Pulling image "busybox"',
        "involvedObject": {"kind": "Pod", "name": "web", "namespace": namespace, "uid": pod["metadata"]["uid"]},
        "source": {"component": "kubelet"}, "count": 2,
        "firstTimestamp": "2026-01-01T00:00:00Z", "lastTimestamp": "2026-01-01T00:00:10Z"}, namespace)
    await client.create(client.kind("v1", "Event"), {  # about another pod of the same name: not shown
        "metadata": {"name": "web.old"}, "type": "Warning", "reason": "OldPod", "message": "stale",
        "involvedObject": {"kind": "Pod", "name": "web", "namespace": namespace, "uid": "another-uid"}}, namespace)

    out = kubectl.ok("describe", "pod", "web").out
    lines = out.splitlines()
    # kubectl's layout: "Key:" then the value in a column aligned over each block of lines
    assert re.fullmatch(r"Name:( +)web", lines[0])
    column = len(lines[0]) - len("web")
    assert lines[1] == "Namespace:".ljust(column) + namespace
    for key, value in (("Node:", "<none>"), ("Labels:", "app=web"), ("Annotations:", "team: blue"),
                       ("Status:", "Pending")):
        assert key.ljust(column) + value in lines, (key, out)
    for pattern in (r"Containers:", r"  app:", r"    Image: +busybox", r"    Port: +8080/TCP", r"      sh",
                    r"      sleep 3600", r"      cpu: +100m", r"      memory: +128Mi",
                    r"    Readiness: +http-get http://:8080/ready delay=0s timeout=1s period=10s #success=1 "
                    r"#failure=3", r"      MODE: +prod", r"      /scratch from scratch \(rw\)",
                    r"    Type: +EmptyDir \(a temporary directory that shares a pod's lifetime\)",
                    r"QoS Class: +Burstable", r"Node-Selectors: +disk=ssd",
                    r"Tolerations: +node.kubernetes.io/not-ready:NoExecute op=Exists for 300s"):
        assert any(re.fullmatch(pattern, line) for line in lines), (pattern, out)
    assert LAST_APPLIED not in out
    events_at = lines.index("Events:")
    assert lines[events_at + 1].split() == ["Type", "Reason", "Age", "From", "Message"]
    assert lines[events_at + 3].split()[:2] == ["Normal", "Pulling"]
    assert "(x2 over" in lines[events_at + 3] and "kubelet" in lines[events_at + 3]
    assert "OldPod" not in out

    everything = kubectl.ok("describe", "pods").out
    assert everything.splitlines()[0] == lines[0] and everything.count("\nEvents:\n") == 1
    assert kubectl.ok("describe", "pod", "we").out.startswith(lines[0])  # a name prefix matches too
    missing = kubectl("describe", "pod", "nope")
    assert_one_error_line(missing, 'Error from server (NotFound): pods "nope" not found')


# ---------------------------------------------------------------------------------- delete
async def test_delete_variants(kubectl: Kubectl, client: Client, namespace: str, tmp_path: Path) -> None:
    docs = [pod_yaml(n, {"app": n[0]}) for n in ("x1", "x2", "y1", "y2", "y3", "z")]
    manifest = tmp_path / "all.yaml"
    manifest.write_text("---\n".join(docs))
    kubectl.ok("apply", "-f", str(manifest))

    assert kubectl.ok("delete", "pod", "z").out == 'pod "z" deleted\n'
    res = kubectl.ok("delete", "pods", "-l", "app=x", "--wait=false")
    assert sorted(res.lines) == ['pod "x1" deleted', 'pod "x2" deleted']
    assert kubectl.ok("delete", "pod/y1", "--now").out == 'pod "y1" deleted\n'
    forced = kubectl.ok("delete", "pod", "y2", "--force", "--grace-period", "0")
    assert forced.out == 'pod "y2" deleted\n' and "Immediate deletion" in forced.err
    assert await pod_names(client, namespace) == ["y3"]

    missing = kubectl("delete", "pod", "y3", "ghost")
    assert missing.code == 1 and missing.out == 'pod "y3" deleted\n'
    assert missing.err.strip() == 'Error from server (NotFound): pods "ghost" not found'
    assert kubectl.ok("delete", "pod", "ghost", "--ignore-not-found").out == ""

    kubectl.ok("apply", "-f", str(manifest))
    res = kubectl.ok("delete", "-f", str(manifest), "--timeout", "30")
    assert len(res.lines) == 6 and all(line.endswith(" deleted") for line in res.lines)
    assert await pod_names(client, namespace) == []

    # --cascade becomes propagationPolicy: foreground/orphan leave a finalizer for the garbage collector
    # (no controller-manager runs here, so don't wait for it)
    kubectl.ok("apply", "-f", str(manifest))
    res = kubectl.ok("delete", "pods", "x1", "x2", "--cascade=foreground", "--wait=false")
    assert res.lines == ['pod "x1" deleted', 'pod "x2" deleted']
    res = kubectl.ok("delete", "pods", "-l", "app=y", "--cascade", "orphan", "--wait=false")
    assert len(res.lines) == 3
    pod_rt = client.kind("v1", "Pod")
    for name, finalizer in (("x1", "foregroundDeletion"), ("y1", "orphan")):
        pod = await client.get(pod_rt, name, namespace)
        assert pod["metadata"]["deletionTimestamp"] and pod["metadata"]["finalizers"] == [finalizer]
    for name in ("x1", "x2", "y1", "y2", "y3"):
        await client.patch(pod_rt, name, {"metadata": {"finalizers": None}}, namespace)
    assert await pod_names(client, namespace) == ["z"]

    kubectl.ok("apply", "-f", str(manifest))
    res = kubectl.ok("delete", "pods", "--all")
    assert len(res.lines) == 6
    assert kubectl.ok("delete", "pods", "--all").out == "No resources found\n"  # as kubectl says it

    assert_one_error_line(kubectl("delete", "pods"), "resource(s) were provided, but no name was specified")
    assert_one_error_line(kubectl("delete", "pods", "--all", "--cascade=sideways"), "invalid cascade value")
    assert_one_error_line(kubectl("delete"), "You must provide one or more resources")


# ---------------------------------------------------------------------------------- bad input
BAD_FILES = {
    "malformed.yaml": ("apiVersion: v1\nkind: Pod\nmetadata:\n  name: a\n  labels: [x\n",
                       ["error: error parsing", "malformed.yaml", "(line "]),
    "tabs.yaml": ("apiVersion: v1\nkind: Pod\nmetadata:\n\tname: a\n", ["error: error parsing", "(line {4})"]),
    "broken.json": ('{"apiVersion": "v1", "kind": "Pod",\n "metadata": {"name": "a"}\n',
                    ["error: error parsing", "broken.json", "(line "]),
    "unknown.yaml": ("apiVersion: v1\nkind: Foo\nmetadata:\n  name: x\n",
                     ['error: resource mapping not found for name: "x" namespace: "" from "',
                      'unknown.yaml": no matches for kind "Foo" in version "v1"']),
    "nokind.yaml": ("apiVersion: v1\nmetadata:\n  name: x\n", ["error: error validating", "kind not set"]),
    "scalar.yaml": ("just a string\n", ["error: error validating", "not an object"]),
}


@pytest.mark.parametrize("verb", ["apply", "create"])
@pytest.mark.parametrize("filename", sorted(BAD_FILES))
async def test_bad_manifest_creates_nothing(kubectl: Kubectl, client: Client, namespace: str, tmp_path: Path,
                                            verb: str, filename: str) -> None:
    text, fragments = BAD_FILES[filename]
    path = tmp_path / filename
    # a valid pod first: nothing at all may be created when a later document is bad
    prefix = "" if filename.endswith(".json") else pod_yaml("good") + "---\n"
    path.write_text(prefix + text)
    res = kubectl(verb, "-f", str(path))
    offset = prefix.count("\n")  # line numbers count from the top of the file
    assert_one_error_line(res, *[re.sub(r"\{(\d+)\}", lambda m: str(int(m[1]) + offset), f) for f in fragments])
    assert res.out == ""
    assert await pod_names(client, namespace) == []


async def test_server_side_errors(kubectl: Kubectl, client: Client, namespace: str) -> None:
    invalid = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "Bad_Name"},
               "spec": {"containers": [{"name": "c", "image": "busybox"}]}}
    res = kubectl("apply", "-f", "-", stdin=json.dumps(invalid))
    assert_one_error_line(res, 'Error from server (Invalid): error when creating "STDIN": Pod "Bad_Name" is invalid')
    res = kubectl("create", "-f", "-", stdin=pod_yaml("x", namespace="elsewhere"), ns=False)
    assert_one_error_line(res, "Error from server (NotFound)", 'namespaces "elsewhere" not found')
    res = kubectl("apply", "-f", "-", stdin=pod_yaml("x", namespace="other"))
    assert_one_error_line(res, 'the namespace from the provided object "other" does not match the namespace')
    assert await pod_names(client, namespace) == []


def test_cli_errors(kubectl: Kubectl, tmp_path: Path) -> None:
    assert_one_error_line(kubectl("get", "foos"), 'error: the server doesn\'t have a resource type "foos"')
    assert_one_error_line(kubectl("get"), "You must specify the type of resource to get")
    assert_one_error_line(kubectl("get", "pods", "-o", "table"), "unable to match a printer")
    assert_one_error_line(kubectl("apply", "-f", str(tmp_path / "missing.yaml")), "does not exist")
    assert_one_error_line(kubectl("apply"), "must specify one of -f")
    res = kubectl("get", "pods", "--bogus")  # pflag's words, as the official kubectl
    assert res.code == 1 and res.err == "Error: unknown flag: --bogus\nSee 'kubectl get --help' for usage.\n"
    assert_one_error_line(kubectl("frobnicate"), "No such command")
    (tmp_path / "empty").mkdir()
    assert_one_error_line(kubectl("apply", "-f", str(tmp_path / "empty")), "no objects passed to apply")


def test_connection_and_kubeconfig_errors(kubectl: Kubectl, tmp_path: Path) -> None:
    refused = kubectl("get", "pods", "-s", "http://127.0.0.1:1")
    assert_one_error_line(refused)
    assert refused.err.strip() == ("The connection to the server 127.0.0.1:1 was refused - "
                                   "did you specify the right host or port?")
    dead = tmp_path / "dead-kubeconfig"
    dead.write_text(render("http://127.0.0.1:1"))
    res = Kubectl(dead, "default")("apply", "-f", "-", stdin=pod_yaml("x"))
    assert_one_error_line(res, "The connection to the server 127.0.0.1:1 was refused")

    res = kubectl("get", "pods", "--kubeconfig", str(tmp_path / "nope"), kubeconfig=False)
    assert_one_error_line(res, "error: kubeconfig", "does not exist")
    bare = subprocess.run([sys.executable, "-m", "minik8s.kubectl", "get", "pods"], capture_output=True, text=True,
                          cwd=ROOT, env={**os.environ, "KUBECONFIG": "", "HOME": str(tmp_path)}, timeout=60)
    assert_one_error_line(Result(bare.returncode, bare.stdout, bare.stderr), "error: no kubeconfig found")
    # kubectl's words (test_kubectl_get_parity compares them with the official binaries')
    assert_one_error_line(kubectl("get", "pods", "--context", "nowhere"),
                          "Error in configuration: context was not found for specified context: nowhere")


def test_global_flags_anywhere_and_help(kubectl: Kubectl, kubeconfig: Path) -> None:
    started = time.monotonic()
    res = subprocess.run([sys.executable, "-m", "minik8s.kubectl", "get", "ns", "default", "--kubeconfig",
                          str(kubeconfig), "-o", "name"], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert res.returncode == 0 and res.stdout == "namespace/default\n"
    assert time.monotonic() - started < 30
    helped = subprocess.run([sys.executable, "-m", "minik8s.kubectl"], capture_output=True, text=True, cwd=ROOT,
                            timeout=60)
    assert helped.returncode == 0 and "apply" in helped.stdout and "api-resources" in helped.stdout


# ---------------------------------------------------------------------------------- pure helpers
# (no services needed; kept here with the CLI tests they support)
def test_human_duration_matches_kubectl() -> None:
    from minik8s.api.columns import human_duration

    cases = {0: "0s", 45: "45s", 119: "119s", 192: "3m12s", 600: "10m", 3 * 3600: "3h", 5 * 3600 + 120: "5h2m",
             20 * 3600: "20h", 2 * 86400 + 3 * 3600: "2d3h", 30 * 86400: "30d", 3 * 365 * 86400: "3y", -5: "<invalid>"}
    for seconds, text in cases.items():
        assert human_duration(seconds) == text, seconds


def test_pod_status_column() -> None:
    from minik8s.api.columns import pod_restarts, pod_status
    from minik8s.kubectl.printing import now

    def pod(*states: dict[str, Any], **extra: Any) -> dict[str, Any]:
        return {"metadata": {}, "spec": {"containers": [{"name": f"c{i}"} for i in range(len(states))]},
                "status": {"phase": "Running", "containerStatuses": [
                    {"name": f"c{i}", "state": s, "ready": "running" in s, "restartCount": 2}
                    for i, s in enumerate(states)], **extra}}

    assert pod_status(pod({"running": {}})) == "Running"
    assert pod_status(pod({"waiting": {"reason": "CrashLoopBackOff"}})) == "CrashLoopBackOff"
    assert pod_status(pod({"waiting": {"reason": "ImagePullBackOff"}})) == "ImagePullBackOff"
    assert pod_status(pod({"terminated": {"reason": "OOMKilled", "exitCode": 137}})) == "OOMKilled"
    assert pod_status(pod({"terminated": {"exitCode": 3}})) == "ExitCode:3"
    assert pod_status(pod({"terminated": {"reason": "Completed", "exitCode": 0}}, {"running": {}})) == "NotReady"
    terminating = pod({"running": {}})
    terminating["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    assert pod_status(terminating) == "Terminating"
    init = pod({"waiting": {"reason": "PodInitializing"}},
               initContainerStatuses=[{"name": "i", "state": {"waiting": {"reason": "ErrImagePull"}}}])
    init["spec"]["initContainers"] = [{"name": "i"}]
    assert pod_status(init) == "Init:ErrImagePull"
    assert pod_status({"metadata": {}, "spec": {}, "status": {"phase": "Pending"}}) == "Pending"
    crashed = pod({"waiting": {"reason": "CrashLoopBackOff"}})
    crashed["status"]["containerStatuses"][0]["lastState"] = {"terminated": {"finishedAt": "2000-01-01T00:00:00Z"}}
    assert re.fullmatch(r"2 \(\S+ ago\)", pod_restarts(crashed, now()))


def test_columns_of_kinds_not_served_yet() -> None:
    from minik8s.api.columns import columns_for
    from minik8s.kubectl.printing import now

    at = now()

    def row(kind: str, obj: dict[str, Any], wide: bool = False) -> dict[str, str]:
        return {c.header: str(c.value(obj, at)) for c in columns_for(kind, wide)}

    svc = {"metadata": {}, "spec": {"type": "NodePort", "clusterIP": "10.96.0.10", "selector": {"app": "web"},
                                    "ports": [{"port": 80, "nodePort": 30080}, {"port": 53, "protocol": "UDP"}]}}
    assert row("Service", svc, wide=True) | {"AGE": ""} == {
        "TYPE": "NodePort", "CLUSTER-IP": "10.96.0.10", "EXTERNAL-IP": "<none>", "PORT(S)": "80:30080/TCP,53/UDP",
        "AGE": "", "SELECTOR": "app=web"}
    eps = {"subsets": [{"addresses": [{"ip": f"10.0.0.{i}"} for i in range(1, 5)], "ports": [{"port": 80}]}]}
    assert row("Endpoints", eps)["ENDPOINTS"] == "10.0.0.1:80,10.0.0.2:80,10.0.0.3:80 + 1 more..."
    rs = {"spec": {"replicas": 3, "template": {"spec": {"containers": [{"name": "a", "image": "x"}]}},
                   "selector": {"matchLabels": {"app": "web"}}}, "status": {"replicas": 3, "readyReplicas": 2}}
    assert [row("ReplicaSet", rs, True)[k] for k in ("DESIRED", "CURRENT", "READY", "IMAGES", "SELECTOR")] == \
        ["3", "3", "2", "x", "app=web"]
    deploy = {"spec": {"replicas": 3}, "status": {"readyReplicas": 1, "updatedReplicas": 3, "availableReplicas": 1}}
    assert [row("Deployment", deploy)[k] for k in ("READY", "UP-TO-DATE", "AVAILABLE")] == ["1/3", "3", "1"]
    hpa = {"spec": {"scaleTargetRef": {"kind": "Deployment", "name": "web"}, "minReplicas": 2, "maxReplicas": 5,
                    "metrics": [{"type": "Resource", "resource": {"name": "cpu", "target": {
                        "type": "Utilization", "averageUtilization": 80}}},
                                {"type": "Resource", "resource": {"name": "memory", "target": {
                                    "type": "AverageValue", "averageValue": "100Mi"}}}]},
           "status": {"currentReplicas": 2, "currentMetrics": [{"type": "Resource", "resource": {
               "name": "cpu", "current": {"averageUtilization": 40}}}]}}
    assert [row("HorizontalPodAutoscaler", hpa)[k] for k in ("REFERENCE", "TARGETS", "MINPODS", "MAXPODS",
                                                              "REPLICAS")] == \
        ["Deployment/web", "cpu: 40%/80%, memory: <unknown>/100Mi", "2", "5", "2"]
    assert list(row("Unknown", {})) == ["AGE"]


def test_tabwriter_and_argv_normalisation() -> None:
    from minik8s.kubectl.app import normalize_argv
    from minik8s.kubectl.printing import table, tabwrite

    assert table(["NAME", "AGE"], [["a", "1s"], ["longer-name", "2m"]]) == [
        "NAME          AGE", "a             1s", "longer-name   2m"]
    assert tabwrite([["Name:", "x"], ["Labels:", "a=1"], ["", "b=2"], ["Containers:"], ["  c:"]], padding=2) == [
        "Name:    x", "Labels:  a=1", "         b=2", "Containers:", "  c:"]
    assert normalize_argv(["get", "pods", "-n", "x", "--kubeconfig=/k", "-o", "wide"]) == \
        ["-n", "x", "--kubeconfig", "/k", "get", "pods", "-o", "wide"]
    assert normalize_argv(["delete", "pod", "a", "--wait=false", "--force=true", "-nfoo"]) == \
        ["-n", "foo", "delete", "pod", "a", "--no-wait", "--force"]
    assert normalize_argv(["exec", "web", "--", "ls", "-n", "--wait=false"]) == \
        ["exec", "web", "--", "ls", "-n", "--wait=false"]


def test_strategic_diff_removes_list_items_by_merge_key() -> None:
    from minik8s.api.patch import strategic_diff, strategic_merge_patch

    old = {"spec": {"containers": [{"name": "a", "image": "x", "env": [{"name": "A", "value": "1"},
                                                                       {"name": "B", "value": "2"}]},
                                   {"name": "b", "image": "y"}]}, "metadata": {"labels": {"x": "1"}}}
    new = {"spec": {"containers": [{"name": "a", "image": "x2", "env": [{"name": "A", "value": "1"}]}]},
           "metadata": {"labels": {}}}
    patch = strategic_diff(old, new)
    assert patch == {"spec": {"containers": [{"name": "a", "image": "x2", "env": [{"$patch": "delete", "name": "B"}]},
                                             {"$patch": "delete", "name": "b"}]},
                     "metadata": {"labels": {"x": None}}}
    assert strategic_merge_patch(old, patch) == new
    assert strategic_diff(new, new) == {}


def test_manifest_parsing_errors() -> None:
    from minik8s.kubectl.errors import KubectlError
    from minik8s.kubectl.manifests import parse

    assert [o["metadata"]["name"] for o in parse(pod_yaml("a") + "---\n---\n" + pod_yaml("b"), "f.yaml")] == ["a", "b"]
    with pytest.raises(KubectlError, match=r"error parsing f.yaml: .* \(line 2\)"):
        parse("a: b\nc: d: e\n", "f.yaml")
    with pytest.raises(KubectlError, match=r"apiVersion not set, kind not set"):
        parse("metadata: {}\n", "f.yaml")


async def test_describe_service_shows_ports_and_endpoints(kubectl: Kubectl, client: Client, namespace: str) -> None:
    svc = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web"},
           "spec": {"type": "NodePort", "selector": {"app": "web"},
                    "ports": [{"name": "http", "port": 80, "targetPort": 8080}]}}
    kubectl.ok("apply", "-f", "-", stdin=json.dumps(svc))
    await client.create(client.kind("v1", "Endpoints"), {
        "metadata": {"name": "web"},
        "subsets": [{"addresses": [{"ip": "10.244.0.5"}, {"ip": "10.244.0.6"}],
                     "ports": [{"name": "http", "port": 8080}]}]}, namespace)
    out = kubectl.ok("describe", "svc", "web").out
    created = await client.get(client.kind("v1", "Service"), "web", namespace)
    assert "Selector:" in out and "app=web" in out and "NodePort" in out
    assert created["spec"]["clusterIP"] in out
    assert "Port:" in out and "http  80/TCP" in out and "TargetPort:" in out and "8080/TCP" in out
    assert f"http  {created['spec']['ports'][0]['nodePort']}/TCP" in out
    # kubectl 1.32 reads a Service's endpoints from its EndpointSlices (no mirroring controller runs
    # here: <none>); the Endpoints object has them
    assert re.search(r"\nEndpoints: +<none>\n", out), out
    assert re.search(r"Addresses: +10\.244\.0\.5,10\.244\.0\.6\n", kubectl.ok("describe", "endpoints", "web").out)
    await client.create(client.kind("discovery.k8s.io/v1", "EndpointSlice"), {
        "metadata": {"name": "web-x", "labels": {"kubernetes.io/service-name": "web"}}, "addressType": "IPv4",
        "endpoints": [{"addresses": ["10.244.0.5"]}, {"addresses": ["10.244.0.6"]}],
        "ports": [{"name": "http", "port": 8080}]}, namespace)
    assert re.search(r"\nEndpoints: +10\.244\.0\.5:8080,10\.244\.0\.6:8080\n", kubectl.ok("describe", "svc", "web").out)
    table = kubectl.ok("get", "endpointslices").out.splitlines()
    assert table[0].split() == ["NAME", "ADDRESSTYPE", "PORTS", "ENDPOINTS", "AGE"]
    assert table[1].split()[:4] == ["web-x", "IPv4", "8080", "10.244.0.5,10.244.0.6"]
