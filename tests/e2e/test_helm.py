"""Real Helm v4 runs the whole lifecycle against the e2e cluster (``minik8s up``): ``helm install --wait``,
``helm test``, ``helm upgrade``, ``helm rollback`` and ``helm uninstall``, each checked on the objects
themselves (our kubectl's reads), for three charts:

- the chart ``helm create`` writes (``minik8s/nginx-site`` as its image; its test pod's ``busybox``
  is pointed at the local ``minik8s/busybox``, which has ``wget``), also driven through helm-sdkpy
  (the Helm v4 Go library, Python >= 3.12, its own virtualenv) where that is installed;
- bitnami's nginx chart (``../shared/charts/nginx``) with its DEFAULT values apart from the image:
  ``minik8s/bitnami-nginx`` (scripts/build-images.sh), which runs like bitnami's image as uid 1001
  with a read-only root and the chart's emptyDir mounts. Its PodDisruptionBudget gets a status
  (disruptionsAllowed 1) and its NetworkPolicy is enforced (kube-proxy): the default policy admits
  any pod on 8080; ``networkPolicy.allowExternal=false`` (the upgrade) admits only pods labelled
  ``<release>-nginx-client=true`` — another pod is refused — and the rollback opens it again.
  The time of its ``helm install --wait`` is printed (``helm install --wait: N s``);
- kube-state-metrics (``../shared/charts/kube-state-metrics``) on a STAND-IN image,
  ``minik8s/kube-state-metrics-standin``: its Go binary cannot be built here (no Go toolchain, no
  registry), so a small Python server takes its flags and answers its probes and ``/metrics`` but
  exports no object metrics. Everything else of the chart (ServiceAccount, ClusterRole and its
  binding, Service, Deployment with its args) is real and checked.

Helm 4 applies with server-side apply and strict field validation. Helm comes from PyPI
(scripts/install-helm.sh); without it, or without ``../shared/charts`` or the local images, a test
skips saying what is missing.
"""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.cluster import Cluster, wait_for
from tests.support.helm import SDKPY_DRIVER, SHARED_CHARTS, Helm, find_helm, find_sdkpy, image_missing

NS_PREFIX = "helm"
BITNAMI_IMAGE = "minik8s/bitnami-nginx:latest"
KSM_IMAGE = "minik8s/kube-state-metrics-standin:latest"


@pytest.fixture
def helm(cluster: Cluster, ns: str, tmp_path: Path) -> Helm:
    path, why = find_helm()
    if path is None:
        pytest.skip(why)
    return Helm(path, cluster.kubeconfig, tmp_path, ns)


def shared_chart(name: str) -> Path:
    chart = SHARED_CHARTS / name
    if not (chart / "Chart.yaml").exists():
        pytest.skip(f"{chart} is absent: the pinned public charts live in ../shared/charts beside the repository")
    return chart


def get(c: Cluster, ns: str | None, *args: str) -> dict | None:
    """One object as JSON, or None when it does not exist."""
    proc = c.kubectl("get", *args, *(["-n", ns] if ns else []), "-o", "json", check=False)
    if proc.returncode != 0:
        assert "NotFound" in proc.stderr or "not found" in proc.stderr, proc.stderr
        return None
    return json.loads(proc.stdout)


def gone(c: Cluster, ns: str | None, *objects: str) -> None:
    for obj in objects:
        assert get(c, ns, obj) is None, f"{obj} is still there after helm uninstall"


def helm_create(helm: Helm) -> Path:
    """``helm create demo``, its test pod pointed at the local busybox (which has wget)."""
    helm("create", "demo")
    chart = helm.home / "demo"
    test = chart / "templates" / "tests" / "test-connection.yaml"
    text = test.read_text()
    assert "image: busybox" in text, text
    local = "image: minik8s/busybox:latest\n      imagePullPolicy: IfNotPresent"
    test.write_text(text.replace("image: busybox", local))
    return chart


CREATE_VALUES = ["--set", "image.repository=minik8s/nginx-site", "--set", "image.tag=latest",
                 "--set", "image.pullPolicy=IfNotPresent"]


def test_helm_create_chart_lifecycle(cluster: Cluster, ns: str, helm: Helm) -> None:
    if why := image_missing("minik8s/nginx-site:latest", "minik8s/busybox:latest"):
        pytest.skip(why)
    chart = helm_create(helm)
    helm("install", "demo", str(chart), *CREATE_VALUES, "--wait", "--timeout", "180s")
    deploy = get(cluster, ns, "deployment", "demo")
    assert deploy and deploy["spec"]["replicas"] == 1
    assert deploy["spec"]["template"]["spec"]["containers"][0]["image"] == "minik8s/nginx-site:latest"
    assert deploy["status"].get("availableReplicas") == 1
    assert deploy["metadata"]["labels"]["app.kubernetes.io/managed-by"] == "Helm"
    assert deploy["metadata"]["annotations"]["meta.helm.sh/release-name"] == "demo"
    assert get(cluster, ns, "service", "demo") and get(cluster, ns, "serviceaccount", "demo")
    release = get(cluster, ns, "secret", "sh.helm.release.v1.demo.v1")
    assert release and release["type"] == "helm.sh/release.v1"

    test = helm("test", "demo", "--timeout", "120s")
    assert "demo-test-connection" in test.stdout and "Succeeded" in test.stdout, test.stdout
    pod = get(cluster, ns, "pod", "demo-test-connection")
    assert pod and pod["status"]["phase"] == "Succeeded"

    helm("upgrade", "demo", str(chart), *CREATE_VALUES, "--set", "replicaCount=2", "--wait", "--timeout", "180s")
    deploy = get(cluster, ns, "deployment", "demo")
    assert deploy and deploy["spec"]["replicas"] == 2 and deploy["status"].get("readyReplicas") == 2

    helm("rollback", "demo", "1", "--wait", "--timeout", "180s")
    deploy = get(cluster, ns, "deployment", "demo")
    assert deploy and deploy["spec"]["replicas"] == 1
    history = json.loads(helm("history", "demo", "-o", "json").stdout)
    assert [(h["revision"], h["status"]) for h in history] == [(1, "superseded"), (2, "superseded"), (3, "deployed")]

    helm("uninstall", "demo", "--wait", "--timeout", "120s")
    gone(cluster, ns, "deployment/demo", "service/demo", "serviceaccount/demo", "secret/sh.helm.release.v1.demo.v1")
    assert helm("list", "-q").stdout.strip() == ""


def test_helm_sdkpy_lifecycle(cluster: Cluster, ns: str, helm: Helm) -> None:
    """The same lifecycle through helm-sdkpy (the Helm v4 library), one subprocess per action."""
    python, why = find_sdkpy()
    if python is None:
        pytest.skip(why)
    if why := image_missing("minik8s/nginx-site:latest"):
        pytest.skip(why)
    chart = helm_create(helm)
    image = {"repository": "minik8s/nginx-site", "tag": "latest", "pullPolicy": "IfNotPresent"}

    def sdk(*args: str, known: str = "") -> object:
        proc = subprocess.run([str(python), str(SDKPY_DRIVER), str(cluster.kubeconfig), ns, *args],
                              capture_output=True, text=True, timeout=240, cwd=helm.home)
        if proc.returncode != 0 and known and known in proc.stderr:
            return None
        assert proc.returncode == 0, f"helm-sdkpy {args[0]} failed:\n{proc.stdout}\n{proc.stderr}"
        return json.loads(proc.stdout.strip().splitlines()[-1])

    sdk("install", "sdk", str(chart), json.dumps({"image": image}))
    deploy = get(cluster, ns, "deployment", "sdk-demo")
    assert deploy and deploy["spec"]["replicas"] == 1 and deploy["status"].get("availableReplicas") == 1
    sdk("upgrade", "sdk", str(chart), json.dumps({"image": image, "replicaCount": 2}))
    deploy = get(cluster, ns, "deployment", "sdk-demo")
    assert deploy and deploy["spec"]["replicas"] == 2 and deploy["status"].get("readyReplicas") == 2
    # helm-sdkpy 0.1.32's Rollback gives Helm v4's rollback action no wait strategy and fails with
    # "unable to get waiter: wait strategy not set" (a helm-sdkpy defect, whatever the cluster;
    # Helm records the failed rollback as a revision); the rollback then goes through the binary.
    rolled_back = sdk("rollback", "sdk", "1", known="wait strategy not set") is not None
    if not rolled_back:
        print("\nhelm-sdkpy Rollback: 'wait strategy not set' (helm-sdkpy defect); rolled back with helm")
        helm("rollback", "sdk", "1", "--wait", "--timeout", "180s")
    assert (get(cluster, ns, "deployment", "sdk-demo") or {})["spec"]["replicas"] == 1
    history = sdk("history", "sdk")
    assert isinstance(history, list)
    # the binary and the library read the same release history; the last revision is deployed
    binary = json.loads(helm("history", "sdk", "-o", "json").stdout)
    assert [h["version"] for h in history] == [h["revision"] for h in binary], (history, binary)
    assert binary[-1]["status"] == "deployed" and len(binary) == (3 if rolled_back else 4), binary
    sdk("uninstall", "sdk")
    gone(cluster, ns, "deployment/sdk-demo", "service/sdk-demo", "secret/sh.helm.release.v1.sdk.v1")


# ---------------------------------------------------------------- bitnami nginx with its default values
CLIENT = ("apiVersion: v1\nkind: Pod\nmetadata: {{name: {name}, labels: {labels}}}\n"
          "spec:\n  terminationGracePeriodSeconds: 0\n  containers:\n"
          "  - {{name: c, image: minik8s/busybox, command: [sleep, '3600']}}\n")


def connect(c: Cluster, ns: str, client: str, ip: str) -> str:
    """``open`` when ``client`` gets nginx's page from ``ip:8080``, ``refused`` when refused, else the output."""
    proc = c.kubectl("exec", "-n", ns, client, "--", "timeout", "4", "wget", "-q", "-O-", f"http://{ip}:8080/",
                     check=False)
    if proc.returncode == 0 and "Welcome to nginx" in proc.stdout:
        return "open"
    out = proc.stdout + proc.stderr
    return "refused" if "refused" in out.lower() else out.strip() or f"exit {proc.returncode}"


def expect(c: Cluster, ns: str, ip: str, want: dict[str, str]) -> None:
    for client, verdict in want.items():
        wait_for(lambda cl=client, v=verdict: connect(c, ns, cl, ip) == v,  # type: ignore[misc]
                 30, what=f"{client} -> nginx {verdict}")


@pytest.fixture
def clients(cluster: Cluster, ns: str) -> Iterator[None]:
    """Two client pods: ``allowed`` with the label the chart's policy admits when allowExternal is
    false (``web-nginx-client: "true"``), ``other`` without it."""
    pods = (CLIENT.format(name="allowed", labels="{web-nginx-client: 'true'}") + "---\n"
            + CLIENT.format(name="other", labels="{role: other}"))
    cluster.kubectl("apply", "-n", ns, "-f", "-", input=pods)
    cluster.kubectl("wait", "-n", ns, "--for=condition=Ready", "pod/allowed", "pod/other", "--timeout=120s",
                    timeout=150)
    yield


def test_bitnami_nginx_default_values_lifecycle(cluster: Cluster, ns: str, helm: Helm, clients: None) -> None:
    chart = shared_chart("nginx")
    if why := image_missing(BITNAMI_IMAGE):
        pytest.skip(why)
    values = ["--set", "global.security.allowInsecureImages=true", "--set", "image.registry=docker.io",
              "--set", "image.repository=minik8s/bitnami-nginx", "--set", "image.tag=latest"]
    started = time.monotonic()
    helm("install", "web", str(chart), *values, "--wait", "--timeout", "180s")
    took = time.monotonic() - started
    print(f"\nhelm install --wait: {took:.1f} s (bitnami/nginx 22.1.1, default values, local image)")

    deploy = get(cluster, ns, "deployment", "web-nginx")
    assert deploy and deploy["status"].get("availableReplicas") == 1
    spec = deploy["spec"]["template"]["spec"]
    assert spec["containers"][0]["securityContext"]["readOnlyRootFilesystem"] is True
    assert spec["containers"][0]["securityContext"]["runAsUser"] == 1001
    pods = cluster.get_json("pods", "-n", ns, "-l", "app.kubernetes.io/instance=web")["items"]
    assert len(pods) == 1 and pods[0]["status"]["phase"] == "Running"
    ip = pods[0]["status"]["podIP"]
    for obj in ("service/web-nginx", "serviceaccount/web-nginx", "secret/web-nginx-tls"):
        assert get(cluster, ns, obj), obj
    assert (get(cluster, ns, "service", "web-nginx") or {})["spec"]["type"] == "LoadBalancer"

    # The PodDisruptionBudget (maxUnavailable 1) is computed by the disruption controller.
    def pdb_status() -> dict | None:
        pdb = get(cluster, ns, "pdb", "web-nginx")
        return pdb["status"] if pdb and (pdb.get("status") or {}).get("expectedPods") == 1 else None

    status = wait_for(pdb_status, 60, what="the PDB's status")
    assert status["currentHealthy"] == 1 and status["desiredHealthy"] == 0
    assert status["disruptionsAllowed"] == 1

    # The default NetworkPolicy admits anyone on 8080/8443 (and isolates the pod for other ports).
    policy = get(cluster, ns, "networkpolicy", "web-nginx")
    assert policy and "from" not in policy["spec"]["ingress"][0]
    expect(cluster, ns, ip, {"allowed": "open", "other": "open"})

    # The upgrade changes one value: only labelled clients are admitted now.
    helm("upgrade", "web", str(chart), *values, "--set", "networkPolicy.allowExternal=false", "--wait",
         "--timeout", "180s")
    policy = get(cluster, ns, "networkpolicy", "web-nginx")
    assert policy is not None
    client = {"podSelector": {"matchLabels": {"web-nginx-client": "true"}}}
    assert client in policy["spec"]["ingress"][0]["from"], policy["spec"]
    expect(cluster, ns, ip, {"allowed": "open", "other": "refused"})

    helm("rollback", "web", "1", "--wait", "--timeout", "180s")
    policy = get(cluster, ns, "networkpolicy", "web-nginx")
    assert policy and "from" not in policy["spec"]["ingress"][0]
    expect(cluster, ns, ip, {"other": "open"})

    helm("uninstall", "web", "--wait", "--timeout", "120s")
    gone(cluster, ns, "deployment/web-nginx", "service/web-nginx", "pdb/web-nginx", "networkpolicy/web-nginx",
         "serviceaccount/web-nginx", "secret/web-nginx-tls")


# ---------------------------------------------------------------- kube-state-metrics on a stand-in image
def test_kube_state_metrics_lifecycle_on_a_stand_in(cluster: Cluster, ns: str, helm: Helm) -> None:
    chart = shared_chart("kube-state-metrics")
    if why := image_missing(KSM_IMAGE):
        pytest.skip(why)
    release = ns  # cluster-scoped objects (ClusterRole, ClusterRoleBinding) are named after the release
    values = ["--set", "image.registry=docker.io", "--set", "image.repository=minik8s/kube-state-metrics-standin",
              "--set", "image.tag=latest"]
    helm("install", release, str(chart), *values, "--wait", "--timeout", "180s")
    name = f"{release}-kube-state-metrics"
    deploy = get(cluster, ns, "deployment", name)
    assert deploy and deploy["status"].get("availableReplicas") == 1
    args = deploy["spec"]["template"]["spec"]["containers"][0]["args"]
    assert "--port=8080" in args and any(a.startswith("--resources=") and "pods" in a for a in args), args
    role = get(cluster, None, "clusterrole", name)
    assert role and any("pods" in (r.get("resources") or []) for r in role["rules"])
    binding = get(cluster, None, "clusterrolebinding", name)
    assert binding and binding["subjects"] == [{"kind": "ServiceAccount", "name": name, "namespace": ns}]
    assert get(cluster, ns, "serviceaccount", name) and get(cluster, ns, "service", name)

    helm("upgrade", release, str(chart), *values, "--set", "collectors={pods,nodes}", "--wait", "--timeout", "180s")
    args = (get(cluster, ns, "deployment", name) or {})["spec"]["template"]["spec"]["containers"][0]["args"]
    assert "--resources=pods,nodes" in args, args

    helm("rollback", release, "1", "--wait", "--timeout", "180s")
    args = (get(cluster, ns, "deployment", name) or {})["spec"]["template"]["spec"]["containers"][0]["args"]
    assert "--resources=pods,nodes" not in args and any(a.startswith("--resources=") and "secrets" in a
                                                          for a in args), args

    helm("uninstall", release, "--wait", "--timeout", "120s")
    gone(cluster, ns, f"deployment/{name}", f"service/{name}", f"serviceaccount/{name}")
    gone(cluster, None, f"clusterrole/{name}", f"clusterrolebinding/{name}")

