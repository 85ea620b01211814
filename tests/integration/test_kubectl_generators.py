"""minik8s' kubectl against the official one (v1.32 and v1.37, :mod:`tests.realkubectl`) for the
generator verbs: ``create deployment|service|serviceaccount|role|clusterrole|rolebinding|
clusterrolebinding``, ``run``, ``expose``, ``set image|env`` and ``autoscale``, against the same
apiserver.  The ``--dry-run=client -o yaml`` objects, the printed lines, the objects created and the
exit code and first stderr line of bad input must match."""

from __future__ import annotations

import json
from typing import Any

import pytest
import yaml

from tests.realkubectl import RealKubectl, real_kubectl  # noqa: F401 - the fixture
from tests.support.kubectl import Kubectl, Result


@pytest.fixture
def mk(kubectl: Kubectl) -> Kubectl:
    """minik8s' kubectl with ``-n`` in front (the helper appends it, after any ``--`` command)."""
    class Front(Kubectl):
        def __call__(self, *args: str, **kwargs: Any) -> Result:
            return kubectl("-n", kubectl.namespace, *args, ns=False, **kwargs)
    return Front(kubectl.kubeconfig, kubectl.namespace)

DRY = ("--dry-run=client", "-o", "yaml")
#: Invocations whose client dry-run objects must be the same (``{n}`` is a fresh name).
DRY_RUNS = [
    ["create", "deployment", "{n}", "--image=nginx:1.25", "-r", "3", "--port=80", "--", "sleep", "10"],
    ["create", "deployment", "{n}", "--image=reg:5000/a/nginx:1", "--image=busybox@sha256:abc"],
    ["create", "service", "clusterip", "{n}", "--tcp=80:8080", "--tcp=443"],
    ["create", "service", "nodeport", "{n}", "--tcp=80:8080", "--node-port=30080"],
    ["create", "service", "externalname", "{n}", "--external-name=example.com"],
    ["create", "serviceaccount", "{n}"],
    ["create", "role", "{n}", "--verb=get,list", "--verb=watch", "--resource=pods,deployments.apps,po/log,rs",
     "--resource-name=a"],
    ["create", "clusterrole", "{n}", "--verb=get", "--resource=nodes", "--non-resource-url=/logs/*"],
    ["create", "rolebinding", "{n}", "--role=r", "--user=u", "--group=g", "--serviceaccount=ns:sa"],
    ["create", "clusterrolebinding", "{n}", "--clusterrole=view", "--user=u"],
    ["create", "configmap", "{n}", "--from-literal=a=1"],
    ["create", "job", "{n}", "--image=busybox", "--", "echo", "hi"],
    ["run", "{n}", "--image=nginx", "--port=80", "--env=A=1", "--env=B=x=y", "--labels=a=b,c=d", "--restart=Never",
     "--image-pull-policy=IfNotPresent", "--annotations=k=v", "--", "sleep", "10"],
    ["run", "{n}", "--image=nginx", "--command", "--restart=OnFailure", "--", "sleep", "10"],
]
#: Bad input: the exit code and the first stderr line must match.
BAD = [
    ["create", "deployment", "x"],
    ["create", "deployment", "x", "--image=nginx", "--replicas=abc"],
    ["create", "deployment", "x", "--image=a", "--image=b", "--", "sleep"],
    ["create", "deployment", "x", "--image=nginx", "--dry-run=maybe"],
    ["create", "service", "clusterip", "x"],
    ["create", "service", "clusterip", "x", "--tcp=abc"],
    ["create", "role", "x", "--resource=pods"],
    ["create", "role", "x", "--verb=bind", "--resource=pods"],
    ["create", "rolebinding", "x", "--user=u"],
    ["create", "rolebinding", "x", "--role=r", "--serviceaccount=bad"],
    ["run", "x"],
    ["run", "--image=nginx"],
    ["run", "x", "--image=nginx", "--restart=Bad"],
    ["run", "x", "--image=nginx", "--env=A"],
    ["run", "x", "--image=nginx", "--port=abc"],
    ["expose", "deployment", "nosuch", "--port=80"],
    ["set", "image", "deployment/nosuch", "a=b"],
    ["autoscale", "deployment", "x", "--min=2"],
]


def normalise(doc: Any) -> Any:
    """Drop ``creationTimestamp: null`` (kubectl 1.32 prints it, 1.37 no longer does)."""
    if isinstance(doc, dict):
        return {k: normalise(v) for k, v in doc.items() if not (k == "creationTimestamp" and v is None)}
    if isinstance(doc, list):
        return [normalise(v) for v in doc]
    return doc


def first_line(res: Result) -> str:
    """The first stderr line, as cobra (``Error: ...``) or klog (``E1127 ... err="..."``) writes it."""
    line = res.err.strip().splitlines()[0] if res.err.strip() else ""
    if '"command failed" err=' in line:  # klog's form of a missing required flag
        line = "error: " + json.loads(line.split(" err=", 1)[1])
    return line.replace("Error: ", "error: ", 1)


def test_dry_run_objects_match(real_kubectl: RealKubectl, mk: Kubectl) -> None:  # noqa: F811
    for args in DRY_RUNS:
        argv = [a.replace("{n}", "gen") for a in args]
        cut = argv.index("--") if "--" in argv else len(argv)
        argv[cut:cut] = DRY  # before the command
        want, got = real_kubectl.ok(*argv), mk.ok(*argv)
        if real_kubectl.version == "1.32":
            assert got.out == want.out, argv
        assert normalise(yaml.safe_load(got.out)) == normalise(yaml.safe_load(want.out)), argv
    # -o json: kubectl prints its Go structs' field order, not sorted keys
    argv = ["create", "deployment", "gen", "--image=nginx", "--port=80", "--dry-run=client", "-o", "json"]
    want, got = real_kubectl.ok(*argv), mk.ok(*argv)
    assert list(json.loads(got.out)) == list(json.loads(want.out))
    assert normalise(json.loads(got.out)) == normalise(json.loads(want.out))
    if real_kubectl.version == "1.32":
        assert got.out == want.out
    for args in (["create", "deployment", "gen", "--image=nginx"], ["run", "gen", "--image=nginx"]):
        for mode, suffix in (("client", " (dry run)"), ("server", " (server dry run)")):
            want, got = real_kubectl.ok(*args, f"--dry-run={mode}"), mk.ok(*args, f"--dry-run={mode}")
            assert got.out == want.out and got.out.endswith(f"/gen created{suffix}\n")
        assert mk.ok(*args, "--dry-run=client", "-o", "name").out == \
            real_kubectl.ok(*args, "--dry-run=client", "-o", "name").out


def test_bad_input_fails_alike(real_kubectl: RealKubectl, mk: Kubectl) -> None:  # noqa: F811
    for args in BAD:
        if real_kubectl.version != "1.32" and "--restart=Bad" in args:
            continue  # 1.37 lists the valid policies; minik8s follows 1.32
        want, got = real_kubectl(*args), mk(*args)
        assert (got.code, first_line(got)) == (want.code, first_line(want)), (args, want.err, got.err)


def _server_view(obj: dict[str, Any]) -> dict[str, Any]:
    meta = {k: v for k, v in obj["metadata"].items() if k in ("labels", "annotations")}
    return {"meta": meta, "spec": obj.get("spec"), "rules": obj.get("rules"), "subjects": obj.get("subjects"),
            "roleRef": obj.get("roleRef")}


def test_created_objects_and_lines(real_kubectl: RealKubectl, mk: Kubectl) -> None:  # noqa: F811
    """Each tool creates its own copy (``r-``/``m-`` names); the lines and the stored objects match."""
    def both(*args: str) -> tuple[Result, Result]:
        want = real_kubectl(*[a.replace("{n}", "r") for a in args])
        got = mk(*[a.replace("{n}", "m") for a in args])
        assert got.code == want.code, (args, want.err, got.err)
        assert got.out.replace("m", "r") == want.out.replace("m", "r"), (args, want.out, got.out)
        if real_kubectl.version == "1.32":  # later versions warn about deprecated flags (--cpu-percent)
            assert got.err.replace("m", "r") == want.err.replace("m", "r"), (args, want.err, got.err)
        return want, got

    def same(kind: str, name: str) -> None:
        want = json.loads(real_kubectl.ok("get", kind, name.replace("{n}", "r"), "-o", "json").out)
        got = json.loads(real_kubectl.ok("get", kind, name.replace("{n}", "m"), "-o", "json").out)
        text = json.dumps(_server_view(got)).replace('"m-', '"r-').replace('"m"', '"r"')
        view = json.loads(text)
        if kind == "svc":  # allocated addresses differ
            for doc in (view, _server_view(want)):
                for key in ("clusterIP", "clusterIPs"):
                    doc["spec"].pop(key, None)
                for port in doc["spec"].get("ports") or []:
                    port.pop("nodePort", None)
            want_view = _server_view(want)
            for key in ("clusterIP", "clusterIPs"):
                want_view["spec"].pop(key, None)
            for port in want_view["spec"].get("ports") or []:
                port.pop("nodePort", None)
            assert view == want_view, kind
            return
        assert view == _server_view(want), kind

    both("create", "deployment", "{n}", "--image=minik8s/nginx", "--replicas=2", "--port=80")
    same("deploy", "{n}")
    both("create", "deployment", "{n}", "--image=minik8s/nginx")  # AlreadyExists
    both("create", "service", "nodeport", "{n}-np", "--tcp=80:8080")
    same("svc", "{n}-np")
    both("create", "serviceaccount", "{n}-sa")
    both("create", "role", "{n}-role", "--verb=get", "--resource=pods,deploy")
    same("role", "{n}-role")
    both("create", "rolebinding", "{n}-rb", "--role={n}-role", "--serviceaccount=x:{n}-sa")
    same("rolebinding", "{n}-rb")
    both("run", "{n}-pod", "--image=minik8s/busybox", "--labels=app={n}-pod", "--port=8080", "--", "sleep", "60")
    same("pod", "{n}-pod")
    both("expose", "deployment", "{n}", "--port=8080", "--target-port=80")
    same("svc", "{n}")
    both("expose", "pod", "{n}-pod", "--name={n}-pod-svc", "--type=NodePort")
    same("svc", "{n}-pod-svc")
    both("set", "image", "deployment/{n}", "nginx=minik8s/nginx:2")
    both("set", "image", "deployment/{n}", "nginx=minik8s/nginx:2")  # unchanged: nothing printed
    both("set", "image", "deployment/{n}", "nope=x")
    both("set", "env", "deployment/{n}", "A=1", "B=2")
    both("set", "env", "deployment/{n}", "A-")
    both("set", "env", "deployment/{n}", "--list")
    same("deploy", "{n}")
    both("autoscale", "deployment", "{n}", "--min=2", "--max=5", "--cpu-percent=50")
    both("autoscale", "deployment", "{n}", "--max=1", "--min=3")


@pytest.mark.parametrize("applier", ["minik8s", "official"])
def test_dry_run_yaml_pipes_into_apply(real_kubectl: RealKubectl, mk: Kubectl, applier: str) -> None:  # noqa: F811
    """``kubectl create deployment x --image=y --dry-run=client -o yaml | kubectl apply -f -``."""
    manifest = mk.ok("create", "deployment", "piped", "--image=minik8s/nginx", *DRY).out
    apply = mk if applier == "minik8s" else real_kubectl
    assert apply.ok("apply", "-f", "-", stdin=manifest).out == "deployment.apps/piped created\n"
    again = apply.ok("apply", "-f", "-", stdin=manifest).out
    if applier == "minik8s":
        assert again == "deployment.apps/piped unchanged\n"
    else:  # the official kubectl's patch of the same manifest is not empty against this apiserver (see README)
        assert again in ("deployment.apps/piped unchanged\n", "deployment.apps/piped configured\n")
