"""The official kubectl (v1.32 and v1.37, see :mod:`tests.realkubectl`) against the real apiserver,
unchanged: every verb's output is checked, not only its exit code.  Pods stay Pending (no
scheduler or kubelet here)."""

from __future__ import annotations

import copy
import re
from pathlib import Path

import httpx
import yaml

from tests.realkubectl import RealKubectl, real_kubectl  # noqa: F401 - the fixture
from tests.support.processes import APIServer

POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web", "labels": {"app": "web", "tier": "front"}},
       "spec": {"containers": [{"name": "c", "image": "minik8s/busybox", "ports": [{"containerPort": 80}]}]}}
DEPLOY = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "front", "labels": {"app": "front"}},
          "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "front"}},
                   "template": {"metadata": {"labels": {"app": "front"}},
                                "spec": {"containers": [{"name": "web", "image": "minik8s/nginx"}]}}}}
SERVICE = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "front"},
           "spec": {"type": "NodePort", "selector": {"app": "front"}, "ports": [{"port": 80, "targetPort": 8080}]}}


def create(apiserver: APIServer, namespace: str, path: str, body: dict) -> dict:
    with httpx.Client(base_url=apiserver.url) as h:
        r = h.post(path.format(ns=namespace), json=body)
        assert r.status_code == 201, r.text
        return r.json()


def test_get_prints_kubernetes_columns(real_kubectl: RealKubectl, apiserver: APIServer,  # noqa: F811
                                       namespace: str) -> None:
    kubectl = real_kubectl
    create(apiserver, namespace, "/api/v1/namespaces/{ns}/pods", POD)
    create(apiserver, namespace, "/apis/apps/v1/namespaces/{ns}/deployments", DEPLOY)
    svc = create(apiserver, namespace, "/api/v1/namespaces/{ns}/services", SERVICE)

    rows = kubectl.ok("get", "pods").table()
    assert rows[0] == ["NAME", "READY", "STATUS", "RESTARTS", "AGE"]
    assert rows[1][:4] == ["web", "0/1", "Pending", "0"]

    rows = kubectl.ok("get", "pods", "-o", "wide").table()
    assert rows[0] == ["NAME", "READY", "STATUS", "RESTARTS", "AGE", "IP", "NODE", "NOMINATED NODE",
                       "READINESS GATES"]
    assert rows[1][5:] == ["<none>"] * 4

    rows = kubectl.ok("get", "pods", "--show-labels").table()
    assert rows[0][-1] == "LABELS" and rows[1][-1] == "app=web,tier=front"
    rows = kubectl.ok("get", "pods", "-L", "tier", "-L", "missing").table()
    assert rows[0][-2:] == ["TIER", "MISSING"] and rows[1][-1] == "front"

    rows = kubectl.ok("get", "deployments", "-o", "wide").table()
    assert rows[0] == ["NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE", "CONTAINERS", "IMAGES", "SELECTOR"]
    assert rows[1][:4] == ["front", "0/2", "0", "0"] and rows[1][5:] == ["web", "minik8s/nginx", "app=front"]

    rows = kubectl.ok("get", "svc", "front").table()
    node_port = svc["spec"]["ports"][0]["nodePort"]
    assert rows[0] == ["NAME", "TYPE", "CLUSTER-IP", "EXTERNAL-IP", "PORT(S)", "AGE"]
    assert rows[1][:5] == ["front", "NodePort", svc["spec"]["clusterIP"], "<none>", f"80:{node_port}/TCP"]

    # Several kinds at once: names prefixed by kind, one table per kind.
    out = kubectl.ok("get", "deploy,svc").out
    assert "deployment.apps/front" in out and "service/front" in out

    rows = kubectl.ok("get", "namespaces", namespace).table()
    assert rows == [["NAME", "STATUS", "AGE"], [namespace, "Active", rows[1][2]]]
    rows = kubectl.ok("get", "pods", "-A", "-l", "app=web").table()
    assert rows[0][:2] == ["NAMESPACE", "NAME"] and [namespace, "web"] in [r[:2] for r in rows[1:]]  # others: theirs
    # Names only and a custom-columns print need full objects, not Tables: still fine.
    assert kubectl.ok("get", "pods", "-o", "name").lines == ["pod/web"]
    rows = kubectl.ok("get", "pods", "-o", "custom-columns=N:.metadata.name,I:.spec.containers[0].image").table()
    assert rows == [["N", "I"], ["web", "minik8s/busybox"]]
    sorted_rows = kubectl.ok("get", "pods", "--sort-by", ".metadata.name").table()
    assert sorted_rows[1][0] == "web"


def test_get_watch_prints_table_rows(real_kubectl: RealKubectl, apiserver: APIServer,  # noqa: F811
                                     namespace: str) -> None:
    kubectl = real_kubectl
    create(apiserver, namespace, "/api/v1/namespaces/{ns}/pods", POD)
    watch = kubectl.start("get", "pods", "-w", "-o", "wide", "--request-timeout", "30s")
    try:
        first = watch.read(2)
        assert len(first) == 2, (first, watch.stop())
        assert first[0].split()[:5] == ["NAME", "READY", "STATUS", "RESTARTS", "AGE"]
        assert first[1].split()[:4] == ["web", "0/1", "Pending", "0"]
        second = POD | {"metadata": {"name": "db", "labels": {"app": "db"}}}
        create(apiserver, namespace, "/api/v1/namespaces/{ns}/pods", second)
        more = watch.read(1)
        assert len(more) == 1 and more[0].split()[:3] == ["db", "0/1", "Pending"], more
    finally:
        err = watch.stop()
    assert "error" not in err.lower(), err


def manifest(tmp_path: Path, name: str, doc: dict) -> str:
    path = tmp_path / name
    path.write_text(yaml.safe_dump(doc))
    return str(path)


def test_apply_validates_by_default(real_kubectl: RealKubectl, apiserver: APIServer,  # noqa: F811
                                    namespace: str, tmp_path: Path) -> None:
    kubectl = real_kubectl
    env = [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}]
    deploy = copy.deepcopy(DEPLOY)
    deploy["spec"]["template"]["spec"]["containers"][0].update(env=env, ports=[{"containerPort": 80}])
    res = kubectl("apply", "-f", manifest(tmp_path, "d.yaml", deploy))
    assert res.code == 0 and res.out == "deployment.apps/front created\n", res.err
    assert "openapi" not in res.err and "Warning" not in res.err
    assert kubectl.ok("apply", "-f", manifest(tmp_path, "d.yaml", deploy)).out == "deployment.apps/front unchanged\n"

    # kubectl computes a strategic merge patch from the served patch metadata; the server applies
    # it with the same merge keys: the env var and the port dropped from the manifest go away.
    container = deploy["spec"]["template"]["spec"]["containers"][0]
    container.update(env=[{"name": "A", "value": "3"}], ports=[{"containerPort": 8080}])
    assert kubectl.ok("apply", "-f", manifest(tmp_path, "d.yaml", deploy)).out == \
        "deployment.apps/front configured\n"
    with httpx.Client(base_url=apiserver.url) as h:
        live = h.get(f"/apis/apps/v1/namespaces/{namespace}/deployments/front").json()
    live_container = live["spec"]["template"]["spec"]["containers"][0]
    assert live_container["env"] == [{"name": "A", "value": "3"}]
    assert [p["containerPort"] for p in live_container["ports"]] == [8080]

    # minik8s' own kinds validate as well (kubectl sends them JSON merge patches, as custom resources).
    dns = {"apiVersion": "minik8s.io/v1", "kind": "DNS", "metadata": {"name": "shop"},
           "spec": {"host": "shop.example.com", "paths": [{"path": "/a", "serviceName": "a", "servicePort": 80}]}}
    assert kubectl.ok("apply", "-f", manifest(tmp_path, "dns.yaml", dns)).out == "dns.minik8s.io/shop created\n"
    dns["spec"]["paths"] = [{"path": "/b", "serviceName": "b", "servicePort": 81}]
    assert kubectl.ok("apply", "-f", manifest(tmp_path, "dns.yaml", dns)).out == "dns.minik8s.io/shop configured\n"


def test_unknown_fields_are_rejected_or_warned(real_kubectl: RealKubectl, namespace: str,  # noqa: F811
                                               tmp_path: Path) -> None:
    kubectl = real_kubectl
    bad = copy.deepcopy(POD)
    bad["spec"]["foo"] = 1
    bad["spec"]["containers"][0]["bar"] = 2
    path = manifest(tmp_path, "bad.yaml", bad)
    for flags in ([], ["--validate=strict"], ["--validate=true"]):
        res = kubectl("apply", *flags, "-f", path)
        assert res.code == 1, (flags, res.out)
        assert res.err.strip() == (
            f'Error from server (BadRequest): error when creating "{path}": Pod in version "v1" cannot be handled '
            'as a Pod: strict decoding error: unknown field "spec.containers[0].bar", unknown field "spec.foo"')
    assert kubectl("get", "pod", "web").code == 1  # nothing was created
    res = kubectl.ok("apply", "--validate=warn", "-f", path)
    assert res.out == "pod/web created\n"
    assert res.err.splitlines() == ['Warning: unknown field "spec.containers[0].bar"',
                                    'Warning: unknown field "spec.foo"']
    res = kubectl.ok("create", "--validate=false", "-f", path, "--dry-run=server", "-o", "name")
    assert "Warning" not in res.err


def test_unhonoured_fields_are_stored_with_warnings(real_kubectl: RealKubectl, namespace: str,  # noqa: F811
                                                    tmp_path: Path) -> None:
    """Fields minik8s cannot honour are stored, and kubectl prints the apiserver's warnings."""
    kubectl = real_kubectl
    deploy = copy.deepcopy(DEPLOY)
    deploy["metadata"]["name"] = "cloudy"
    spec = deploy["spec"]["template"]["spec"]
    spec["volumes"] = [{"name": "disk", "awsElasticBlockStore": {"volumeID": "vol-1"}}]
    spec["securityContext"] = {"windowsOptions": {"runAsUserName": "admin"}}
    path = manifest(tmp_path, "cloudy.yaml", deploy)
    res = kubectl.ok("apply", "-f", path)
    assert res.out == "deployment.apps/cloudy created\n"
    assert res.err.splitlines() == [
        "Warning: spec.template.spec.volumes[0].awsElasticBlockStore: not supported by minik8s; stored, but the "
        "kubelet cannot mount this volume type (the pod waits in ContainerCreating, FailedMount)",
        "Warning: spec.template.spec.securityContext.windowsOptions: not supported by minik8s; stored but not used "
        "(minik8s runs Linux containers only)"]
    stored = yaml.safe_load(kubectl.ok("get", "deployment", "cloudy", "-o", "yaml").out)["spec"]["template"]["spec"]
    assert stored["volumes"][0]["awsElasticBlockStore"] == {"volumeID": "vol-1"}
    assert stored["securityContext"] == {"windowsOptions": {"runAsUserName": "admin"}}
    spec["hostUsers"] = False  # an update warns only about what is new
    res = kubectl.ok("apply", "-f", manifest(tmp_path, "cloudy.yaml", deploy))
    assert res.err.splitlines() == ["Warning: spec.template.spec.hostUsers: not supported by minik8s; stored but "
                                    "not used (no user namespaces: pods share the host's users)"]


def test_explain(real_kubectl: RealKubectl) -> None:  # noqa: F811
    kubectl = real_kubectl
    out = kubectl.ok("explain", "pod.spec", ns=False).out
    assert "KIND:       Pod" in out and "FIELD: spec <PodSpec>" in out
    assert re.search(r"^  containers\s+<\[\]Container> -required-$", out, re.M), out
    assert "List of containers belonging to the pod." in out  # Kubernetes' own field documentation
    assert re.search(r"^  nodeSelector\s+<map\[string\]string>$", out, re.M), out
    out = kubectl.ok("explain", "deployment.spec.template.spec.containers.ports", ns=False).out
    assert "GROUP:      apps" in out and re.search(r"^  containerPort\s+<integer> -required-$", out, re.M)
    out = kubectl.ok("explain", "svc.spec.ports", ns=False).out
    assert re.search(r"^  port\s+<integer> -required-$", out, re.M) and re.search(r"^  targetPort\s", out, re.M)
    out = kubectl.ok("explain", "dns.spec", ns=False).out  # minik8s' own kind
    assert "GROUP:      minik8s.io" in out and re.search(r"^  host\s+<string> -required-$", out, re.M)
    out = kubectl.ok("explain", "deployment.spec", "--output", "plaintext-openapiv2", ns=False).out  # v2, protobuf
    assert "RESOURCE: spec <Object>" in out and re.search(r"^   template\s+<Object> -required-$", out, re.M), out
    res = kubectl("explain", "pod.spec.nothing", ns=False)
    assert res.code == 1 and 'field "nothing" does not exist' in res.err


def test_generators_create_expose_run_scale(real_kubectl: RealKubectl, apiserver: APIServer,  # noqa: F811
                                            namespace: str) -> None:
    """``kubectl create <kind>`` and ``autoscale`` send protobuf bodies; expose, run, scale JSON."""
    kubectl = real_kubectl
    assert kubectl.ok("create", "deployment", "web", "--image=minik8s/nginx", "--replicas=2", "--port=80").out == \
        "deployment.apps/web created\n"
    with httpx.Client(base_url=apiserver.url) as h:
        deploy = h.get(f"/apis/apps/v1/namespaces/{namespace}/deployments/web").json()
    assert deploy["spec"]["replicas"] == 2 and deploy["spec"]["selector"] == {"matchLabels": {"app": "web"}}
    container = deploy["spec"]["template"]["spec"]["containers"][0]
    assert (container["name"], container["image"], container["ports"][0]["containerPort"]) == \
        ("nginx", "minik8s/nginx", 80)
    assert "creationTimestamp" not in deploy["spec"]["template"]["metadata"]

    assert kubectl.ok("create", "deployment", "idle", "--image=minik8s/nginx", "--replicas=0").out == \
        "deployment.apps/idle created\n"
    assert kubectl.ok("get", "deploy", "idle", "-o", "jsonpath={.spec.replicas}").out == "0"

    assert kubectl.ok("create", "service", "nodeport", "front", "--tcp=80:8080").out == "service/front created\n"
    ports = kubectl.ok("get", "svc", "front", "-o", "jsonpath={.spec.ports[0].port} {.spec.ports[0].targetPort}").out
    assert ports == "80 8080"
    assert kubectl.ok("create", "service", "clusterip", "headless", "--clusterip=None").out == \
        "service/headless created\n"
    assert kubectl.ok("get", "svc", "headless", "-o", "jsonpath={.spec.clusterIP}").out == "None"

    assert kubectl.ok("expose", "deployment", "web", "--port=8080", "--target-port=80").out == "service/web exposed\n"
    rows = kubectl.ok("get", "svc", "web").table()
    assert rows[1][:2] == ["web", "ClusterIP"] and rows[1][4] == "8080/TCP"
    assert kubectl.ok("get", "svc", "web", "-o", "jsonpath={.spec.selector.app}").out == "web"

    assert kubectl.ok("run", "one", "--image=minik8s/busybox", "--", "sleep", "60").out == "pod/one created\n"
    assert kubectl.ok("get", "pod", "one", "-o", "jsonpath={.spec.containers[0].args}").out == '["sleep","60"]'

    assert kubectl.ok("scale", "deployment", "web", "--replicas=3").out == "deployment.apps/web scaled\n"
    assert kubectl.ok("get", "deploy", "web", "-o", "jsonpath={.spec.replicas}").out == "3"
    # kubectl 1.37 waits with a watch-list (sendInitialEvents), 1.32 with list + watch
    assert kubectl.ok("wait", "--for=jsonpath={.spec.replicas}=3", "deploy/web", "--timeout=20s").out == \
        "deployment.apps/web condition met\n"

    name = f"n-{namespace}"
    assert kubectl.ok("create", "namespace", name, ns=False).out == f"namespace/{name} created\n"
    kubectl.ok("delete", "namespace", name, "--wait=false", ns=False)
    assert kubectl.ok("create", "ingress", "site", "--rule=foo.com/bar=web:8080").out == \
        "ingress.networking.k8s.io/site created\n"
    assert kubectl.ok("get", "ingress", "site", "-o", "jsonpath={.spec.rules[0].http.paths[0].backend.service.name}"
                      ).out == "web"

    # 1.32 creates an autoscaling/v1 HPA (served by conversion), 1.37 an autoscaling/v2 one; both in protobuf
    res = kubectl("autoscale", "deployment", "web", "--min=2", "--max=5", "--cpu-percent=50")
    assert res.code == 0 and res.out == "horizontalpodautoscaler.autoscaling/web autoscaled\n", res.err
    rows = kubectl.ok("get", "hpa", "web").table()
    assert rows[1][:3] == ["web", "Deployment/web", "cpu: <unknown>/50%"] and rows[1][3:6] == ["2", "5", "0"]
    assert kubectl.ok("get", "horizontalpodautoscalers.v1.autoscaling", "web", "-o",
                      "jsonpath={.spec.targetCPUUtilizationPercentage}").out == "50"


def test_batch_and_daemonset_verbs(real_kubectl: RealKubectl, apiserver: APIServer,  # noqa: F811
                                   namespace: str) -> None:
    """``kubectl create job|cronjob`` (protobuf bodies), ``create job --from=cronjob/X`` and the
    Job, CronJob and DaemonSet columns.  No controllers run here: the Job stays at 0 completions."""
    kubectl = real_kubectl
    assert kubectl.ok("create", "cronjob", "tick", "--image=minik8s/busybox", "--schedule=*/5 * * * *",
                      "--", "true").out == "cronjob.batch/tick created\n"
    rows = kubectl.ok("get", "cronjobs").table()
    assert rows[0][:5] == ["NAME", "SCHEDULE", "TIMEZONE", "SUSPEND", "ACTIVE"]
    assert rows[1][:5] == ["tick", "*/5 * * * *", "<none>", "False", "0"]
    assert kubectl.ok("create", "job", "once", "--from=cronjob/tick").out == "job.batch/once created\n"
    job = kubectl.ok("get", "job", "once", "-o", "jsonpath={.metadata.ownerReferences[0].kind} "
                     "{.metadata.annotations.cronjob\\.kubernetes\\.io/instantiate}").out
    assert job == "CronJob manual"
    assert kubectl.ok("create", "job", "pi", "--image=minik8s/busybox", "--", "sh", "-c", "exit 0").out == \
        "job.batch/pi created\n"
    assert kubectl.ok("get", "job", "pi", "-o", "jsonpath={.spec.template.spec.restartPolicy} "
                      "{.spec.backoffLimit} {.spec.completions}").out == "Never 6 1"
    rows = kubectl.ok("get", "jobs").table()
    assert rows[0][:4] == ["NAME", "STATUS", "COMPLETIONS", "DURATION"]
    assert {r[0]: r[2] for r in rows[1:]} == {"once": "0/1", "pi": "0/1"}

    create(apiserver, namespace, "/apis/apps/v1/namespaces/{ns}/daemonsets", {
        "apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "agent"},
        "spec": {"selector": {"matchLabels": {"app": "agent"}},
                 "template": {"metadata": {"labels": {"app": "agent"}},
                              "spec": {"containers": [{"name": "a", "image": "minik8s/busybox"}]}}}})
    rows = kubectl.ok("get", "ds", "-o", "wide").table()
    assert rows[0][:6] == ["NAME", "DESIRED", "CURRENT", "READY", "UP-TO-DATE", "AVAILABLE"]
    assert rows[1][:6] == ["agent", "0", "0", "0", "0", "0"] and "minik8s/busybox" in rows[1]


def test_statefulset_verbs(real_kubectl: RealKubectl, apiserver: APIServer, namespace: str) -> None:  # noqa: F811
    """``get sts`` (and ``-o wide``) columns, ``scale sts`` through the scale subresource and ``rollout
    restart sts/X``.  No controllers run here: the StatefulSet stays at 0 ready."""
    kubectl = real_kubectl
    create(apiserver, namespace, "/apis/apps/v1/namespaces/{ns}/statefulsets", {
        "apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "db"},
        "spec": {"serviceName": "db", "replicas": 1, "selector": {"matchLabels": {"app": "db"}},
                 "template": {"metadata": {"labels": {"app": "db"}},
                              "spec": {"containers": [{"name": "d", "image": "minik8s/busybox"}]}}}})
    rows = kubectl.ok("get", "sts").table()
    assert rows[0] == ["NAME", "READY", "AGE"] and rows[1][:2] == ["db", "0/1"]
    rows = kubectl.ok("get", "statefulsets", "-o", "wide").table()
    assert rows[0] == ["NAME", "READY", "AGE", "CONTAINERS", "IMAGES"] and rows[1][-2:] == ["d", "minik8s/busybox"]
    assert kubectl.ok("scale", "sts", "db", "--replicas=3").out == "statefulset.apps/db scaled\n"
    assert kubectl.ok("get", "sts", "db", "-o", "jsonpath={.spec.replicas}").out == "3"
    assert kubectl.ok("rollout", "restart", "sts/db").out == "statefulset.apps/db restarted\n"
    restarted = kubectl.ok("get", "sts", "db", "-o",
                           "jsonpath={.spec.template.metadata.annotations.kubectl\\.kubernetes\\.io/restartedAt}").out
    assert restarted
