"""minik8s' kubectl against the official one (v1.32 and v1.37, :mod:`tests.realkubectl`) for the
generator verbs: ``create deployment|service|serviceaccount|role|clusterrole|rolebinding|
clusterrolebinding|configmap|secret generic|secret tls|secret docker-registry|ingress|token``,
``run``, ``expose``, ``set image|env`` and ``autoscale``, against the same apiserver.  ``create
token`` prints a fresh token each time: its JWT claims are compared (``aud``, ``sub``, ``exp -
iat``).  The certificates and keys of ``create secret tls`` are made by the module
(``cryptography``).  The ``--dry-run=client`` objects, the printed lines, the objects created and the exit
code and first stderr line of bad input must match byte for byte, up to the differences listed in
:data:`tests.support.kubectl_parity.KNOWN_DIFFERENCES` (each applied by name where it occurs).

Speed: every invocation that changes nothing runs once per module for minik8s (both official
versions compare with the same result) and all of them run concurrently
(:class:`~tests.support.kubectl_parity.Runs`); the invocations that create objects run as one
script per CLI, each in a namespace of its own, the three scripts at once.
"""

from __future__ import annotations

import base64
import datetime as dt
import json
import os
import re
import tempfile
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

from minik8s.client.kubeconfig import render
from tests.realkubectl import CANDIDATES, find
from tests.support.kubectl import Result
from tests.support.kubectl_parity import Runs, tolerate
from tests.support.processes import APIServer

VERSIONS = sorted(CANDIDATES)
#: The module's input files (certificates, keys, a Docker config, an env file): made by :func:`write_inputs`.
FILES = Path(tempfile.gettempdir()) / f"kubectl-generators-{os.getpid()}"
CERT, KEY, OTHER_KEY, JUNK = (str(FILES / n) for n in ("tls.crt", "tls.key", "other.key", "junk"))
DOCKER_CONFIG, ENV_FILE, BINARY = (str(FILES / n) for n in ("config.json", "env", "binary"))
#: The namespace of the invocations that change nothing (client and server dry runs, bad input).
NS = "gen"
DRY = ("--dry-run=client", "-o", "yaml")
#: Invocations whose client dry-run objects must be the same.
DRY_RUNS = [
    ["create", "deployment", "gen", "--image=nginx:1.25", "-r", "3", "--port=80", "--", "sleep", "10"],
    ["create", "deployment", "gen", "--image=reg:5000/a/nginx:1", "--image=busybox@sha256:abc"],
    ["create", "service", "clusterip", "gen", "--tcp=80:8080", "--tcp=443"],
    ["create", "service", "nodeport", "gen", "--tcp=80:8080", "--node-port=30080"],
    ["create", "service", "externalname", "gen", "--external-name=example.com"],
    ["create", "serviceaccount", "gen"],
    ["create", "role", "gen", "--verb=get,list", "--verb=watch", "--resource=pods,deployments.apps,po/log,rs",
     "--resource-name=a"],
    ["create", "clusterrole", "gen", "--verb=get", "--resource=nodes", "--non-resource-url=/logs/*"],
    ["create", "rolebinding", "gen", "--role=r", "--user=u", "--group=g", "--serviceaccount=ns:sa"],
    ["create", "clusterrolebinding", "gen", "--clusterrole=view", "--user=u"],
    ["create", "configmap", "gen", "--from-literal=a=1"],
    ["create", "job", "gen", "--image=busybox", "--", "echo", "hi"],
    ["run", "gen", "--image=nginx", "--port=80", "--env=A=1", "--env=B=x=y", "--labels=a=b,c=d", "--restart=Never",
     "--image-pull-policy=IfNotPresent", "--annotations=k=v", "--", "sleep", "10"],
    ["run", "gen", "--image=nginx", "--command", "--restart=OnFailure", "--", "sleep", "10"],
    ["create", "secret", "tls", "gen", f"--cert={CERT}", f"--key={KEY}"],
    ["create", "secret", "tls", "gen", f"--cert={CERT}", f"--key={KEY}", "--append-hash"],
    ["create", "secret", "docker-registry", "gen", "--docker-server=reg.io:5000", "--docker-username=u",
     "--docker-password=p<&>", "--docker-email=u@example.com"],
    ["create", "secret", "docker-registry", "gen", "--docker-username=u", "--docker-password=p", "--append-hash"],
    ["create", "secret", "docker-registry", "gen", f"--from-file={DOCKER_CONFIG}"],
    ["create", "secret", "docker-registry", "gen", f"--from-file=x={DOCKER_CONFIG}", f"--from-file=y={DOCKER_CONFIG}"],
    ["create", "secret", "generic", "gen", f"--from-env-file={ENV_FILE}", "--type=example.com/t", "--append-hash"],
    ["create", "secret", "generic", "gen", "--append-hash"],
    ["create", "configmap", "gen", f"--from-file={BINARY}", "--from-literal=a=<&>", "--append-hash"],
    ["create", "configmap", "gen", "--append-hash"],
    ["create", "ingress", "gen", "--rule=foo.com/bar*=svc:8080,tls=sec", "--rule=bar.com/=svc2:http",
     "--rule=/path=svc3:80,tls", "--rule=foo.com/x=s:-5,tls=other", "--rule=b.io/y=s:2147483648,tlsx",
     "--class=nginx", "--default-backend=def:80", "--annotation=a=b=c", "--annotation=k="],
    ["create", "ingress", "gen", "--default-backend=:http"],
    ["create", "clusterrole", "gen", "--aggregation-rule=a=b,c=d"],
]
#: ``-o json``: kubectl prints its Go structs' field order, not sorted keys.
JSON_RUN = ["create", "deployment", "gen", "--image=nginx", "--port=80", "--dry-run=client", "-o", "json"]
JSON_RUNS = [JSON_RUN, *[[*args, "--dry-run=client", "-o", "json"] for args in (
    ["create", "ingress", "gen", "--rule=foo.com/bar*=svc:8080,tls=sec", "--class=c", "--annotation=a=b"],
    ["create", "secret", "docker-registry", "gen", "--docker-username=u", "--docker-password=p"],
    ["create", "secret", "tls", "gen", f"--cert={CERT}", f"--key={KEY}"])]]
#: The new generators' server dry runs (printed lines): the server validates what each builds.
SERVER_DRY_RUNS = [[*args, "--dry-run=server"] for args in (
    ["create", "secret", "tls", "gen", f"--cert={CERT}", f"--key={KEY}", "--append-hash"],
    ["create", "secret", "docker-registry", "gen", "--docker-username=u", "--docker-password=p"],
    ["create", "ingress", "gen", "--rule=foo.com/bar*=svc:8080,tls=sec", "--rule=/x=s:http"],
    ["create", "configmap", "gen", "--from-literal=a=b", "--append-hash"],
    ["create", "secret", "generic", "gen", "--from-literal=a=b", "--append-hash"],
    ["create", "clusterrole", "gen", "--aggregation-rule=a=b"])] + [
    ["create", "ingress", "gen", "--rule=a.com/=s:80", "--dry-run=server", "-o", "name"],
    ["create", "secret", "tls", "gen", f"--cert={CERT}", f"--key={KEY}", "--dry-run=server", "-o", "name"]]
#: The lines printed by client and server dry runs and by ``-o name``.
LINE_RUNS = [[*args, flag]
             for args in (["create", "deployment", "gen", "--image=nginx"], ["run", "gen", "--image=nginx"])
             for flag in ("--dry-run=client", "--dry-run=server")] + [
    ["create", "deployment", "gen", "--image=nginx", "--dry-run=client", "-o", "name"],
    ["run", "gen", "--image=nginx", "--dry-run=client", "-o", "name"]]
#: Bad input: the exit code and the first stderr line must match.
BAD = [
    ["create", "deployment", "x"],
    ["create", "deployment", "x", "--image=nginx", "--replicas=abc"],
    ["create", "deployment", "x", "--image=a", "--image=b", "--", "sleep"],
    ["create", "deployment", "x", "--image=nginx", "--dry-run=maybe"],
    ["create", "deployment", "x", "--image=nginx", "--port=abc"],
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
    ["create", "secret", "tls", "x", f"--cert={CERT}"],
    ["create", "secret", "tls", "x"],
    ["create", "secret", "tls", f"--cert={CERT}", f"--key={KEY}"],
    ["create", "secret", "tls", "x", f"--cert={JUNK}", f"--key={KEY}"],
    ["create", "secret", "tls", "x", f"--cert={CERT}", f"--key={JUNK}"],
    ["create", "secret", "tls", "x", f"--cert={KEY}", f"--key={KEY}"],
    ["create", "secret", "tls", "x", f"--cert={CERT}", f"--key={CERT}"],
    ["create", "secret", "tls", "x", f"--cert={CERT}", f"--key={OTHER_KEY}"],
    ["create", "secret", "tls", "x", f"--cert={JUNK}.nosuch", f"--key={KEY}"],
    ["create", "secret", "docker-registry", "x", "--docker-password=p"],
    ["create", "secret", "docker-registry", "x", "--docker-username=u", "--docker-password=p", "--docker-server="],
    ["create", "secret", "generic", "x", f"--from-env-file={ENV_FILE}", "--from-literal=a=b"],
    ["create", "configmap", "x", f"--from-env-file={JUNK}"],
    ["create", "ingress", "x"],
    ["create", "ingress", "x", "--rule=foo.com=svc:80"],
    ["create", "ingress", "x", "--rule=foo.com/bar=svc"],
    ["create", "ingress", "x", "--rule=a.com/=s:80", "--annotation=bad"],
    ["create", "ingress", "x", "--default-backend=svc"],
    ["create", "ingress"],
    ["create", "clusterrole", "x", "--aggregation-rule=a"],
    ["create", "token"],
    ["create", "token", "x", "--duration=1.5s"],
    ["create", "token", "x", "--duration=-1s", "--audience="],
    ["create", "token", "x", "--duration=abc"],
    ["create", "token", "x", "--audience="],
    ["create", "token", "x", "--bound-object-kind=Foo"],
    ["create", "token", "x", "--bound-object-kind=Pod"],
    ["create", "token", "x", "--bound-object-name=p"],
    ["create", "token", "x", "--bound-object-uid=u"],
    ["create", "token", "x", "--dry-run=client"],
    ["create", "token", "nosuch"],
    # a server error, in each generator's words (``failed to create configmap: ...``)
    *[["create", *args, "-n", "nosuch"] for args in (
        ["configmap", "x", "--from-literal=a=b"], ["secret", "generic", "x", "--from-literal=a=b"],
        ["service", "clusterip", "x", "--tcp=80"], ["service", "nodeport", "x", "--tcp=80"],
        ["service", "externalname", "x", "--external-name=a.b"], ["service", "loadbalancer", "x", "--tcp=80"],
        ["serviceaccount", "x"], ["rolebinding", "x", "--role=r", "--user=u"], ["job", "x", "--image=nginx"],
        ["cronjob", "x", "--image=nginx", "--schedule=* * * * *"], ["deployment", "x", "--image=nginx"],
        ["secret", "tls", "x", f"--cert={CERT}", f"--key={KEY}"], ["token", "x"], ["ingress", "x", "--rule=/=s:80"],
        ["secret", "docker-registry", "x", "--docker-username=u", "--docker-password=p"])],
]
#: The listed differences the bad-input cases may meet.
BAD_DIFFERENCES = ("1.32-required-flag-klog", "1.37-flag-error-case", "1.37-restart-policy-list",
                   "1.37-run-port-error")
#: What each generator stores, by the kind ``same`` compares: its API path (``{ns}``, ``{name}``).
PATHS = {
    "deploy": "/apis/apps/v1/namespaces/{ns}/deployments/{name}",
    "svc": "/api/v1/namespaces/{ns}/services/{name}",
    "role": "/apis/rbac.authorization.k8s.io/v1/namespaces/{ns}/roles/{name}",
    "rolebinding": "/apis/rbac.authorization.k8s.io/v1/namespaces/{ns}/rolebindings/{name}",
    "pod": "/api/v1/namespaces/{ns}/pods/{name}",
    "secret": "/api/v1/namespaces/{ns}/secrets/{name}",
    "cm": "/api/v1/namespaces/{ns}/configmaps/{name}",
    "ing": "/apis/networking.k8s.io/v1/namespaces/{ns}/ingresses/{name}",
}


def write_inputs() -> None:
    """:data:`FILES`: a self-signed certificate and its RSA key, another key, a file that is no PEM,
    a Docker config, an env file and a file that is not UTF-8."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec, rsa
    from cryptography.x509.oid import NameOID

    FILES.mkdir(exist_ok=True)
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "gen.example.com")])
    now = dt.datetime.now(dt.UTC)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now)
            .not_valid_after(now + dt.timedelta(days=1)).sign(key, hashes.SHA256()))
    pem = serialization.Encoding.PEM
    Path(CERT).write_bytes(cert.public_bytes(pem))
    for path, private in ((KEY, key), (OTHER_KEY, ec.generate_private_key(ec.SECP256R1()))):
        Path(path).write_bytes(private.private_bytes(pem, serialization.PrivateFormat.PKCS8,
                                                     serialization.NoEncryption()))
    Path(JUNK).write_text("not PEM\n")
    Path(DOCKER_CONFIG).write_text('{"auths":{"r.io":{"auth":"dTpw"}}}\n')
    Path(ENV_FILE).write_text("A=1\n# a comment\n  B=two words \n\nC=\n")
    Path(BINARY).write_bytes(b"\xff\xfe\x00")


@dataclass
class Module:
    """The module's apiserver, kubeconfig, runner and the results of the scripts."""

    apiserver: APIServer
    home: Path
    runs: Runs
    scripts: dict[str, Future[list[Any]]] = field(default_factory=dict)

    @property
    def kubeconfig(self) -> Path:
        return self.home / "kubeconfig"

    def env(self) -> dict[str, str]:
        return {**os.environ, "KUBECONFIG": "/nonexistent", "HOME": str(self.home), "COLUMNS": "200",
                "KUBECTL_INTERACTIVE_DELETE": "false"}

    def prefix(self, ns: str) -> list[str]:
        return ["--kubeconfig", str(self.kubeconfig), "-n", ns]

    def ours(self, args: list[str], ns: str = NS, stdin: str | None = None) -> Future[Result]:
        """minik8s' result (once per module: only for invocations that change nothing)."""
        return self.runs.minik8s([*self.prefix(ns), *args], self.env(), stdin)

    def official(self, version: str, args: list[str], ns: str = NS, stdin: str | None = None) -> Future[Result]:
        path, _ = find(version)
        assert path is not None
        cache = ["--cache-dir", str(self.home / f"kubectl-cache-{version}")]
        return self.runs.official(path, [*cache, *self.prefix(ns), *args], self.env(), stdin)


def script_ns(version: str) -> str:
    """The namespace of the official ``version``'s script (``gen-1-32``)."""
    return f"gen-{version.replace('.', '-')}"


def available(version: str) -> None:
    """Skip, with the reason, where the official ``version`` is not installed."""
    path, why = find(version)
    if path is None:
        pytest.skip(why)


@pytest.fixture(scope="module")
def module(apiserver: APIServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Module]:
    """Namespaces ``gen`` (what changes nothing), ``gen-minik8s`` and ``gen-<version>`` (each CLI's
    script); every stateless invocation submitted at once; the scripts started."""
    write_inputs()
    home = tmp_path_factory.mktemp("generators")
    (home / "kubeconfig").write_text(render(apiserver.url))
    runs = Runs(4)
    mod = Module(apiserver, home, runs)
    with httpx.Client(base_url=apiserver.url) as h:
        for ns in [NS, "gen-minik8s", *(script_ns(v) for v in VERSIONS)]:
            r = h.post("/api/v1/namespaces", json={"metadata": {"name": ns}})
            assert r.status_code in (201, 409), r.text
    stateless = [*([*a[:a.index("--")], *DRY, *a[a.index("--"):]] if "--" in a else [*a, *DRY] for a in DRY_RUNS),
                 *JSON_RUNS, *LINE_RUNS, *SERVER_DRY_RUNS, *BAD]
    for args in stateless:
        mod.ours(args)
        for version in VERSIONS:
            if find(version)[0] is not None:
                mod.official(version, args)
    scripts = ThreadPoolExecutor(1 + len(VERSIONS))
    mod.scripts["minik8s"] = scripts.submit(script, mod, "gen-minik8s", lambda a, stdin=None: runs.run_minik8s(
        [*mod.prefix("gen-minik8s"), *a], mod.env(), stdin))
    for version in VERSIONS:
        if find(version)[0] is not None:
            ns = script_ns(version)
            mod.scripts[version] = scripts.submit(
                script, mod, ns, lambda a, stdin=None, v=version, n=ns: mod.official(v, a, n, stdin).result())
    try:
        yield mod
    finally:
        scripts.shutdown(wait=True, cancel_futures=True)
        runs.close()
        for path in FILES.iterdir():
            path.unlink()
        FILES.rmdir()


def _with_dry(args: list[str]) -> list[str]:
    cut = args.index("--") if "--" in args else len(args)
    return [*args[:cut], *DRY, *args[cut:]]


def compare(version: str, mod: Module, args: list[str], differences: tuple[str, ...] = (),
            first_line_only: bool = False) -> str:
    """'' when the official ``version`` and minik8s print the same for ``args``, else why not."""
    official, ours = tolerate(differences, version, mod.official(version, args).result(), mod.ours(args).result())
    if first_line_only:
        official = Result(official.code, "", (official.err.strip().splitlines() or [""])[0])
        ours = Result(ours.code, "", (ours.err.strip().splitlines() or [""])[0])
    return "" if official == ours else f"{args}:\n  official {official}\n  minik8s  {ours}"


@pytest.mark.parametrize("version", VERSIONS)
def test_dry_run_objects_match(version: str, module: Module) -> None:
    """``--dry-run=client -o yaml|json|name`` and ``--dry-run=server``: the same bytes."""
    available(version)
    cases = [_with_dry(a) for a in DRY_RUNS] + JSON_RUNS + LINE_RUNS + SERVER_DRY_RUNS
    failures = [f for f in (compare(version, module, a, ("1.37-creationTimestamp-null",)) for a in cases) if f]
    assert not failures, "\n".join(failures)
    suffixes = [" (dry run)\n", " (server dry run)\n"] * 2
    for args, suffix in zip(LINE_RUNS, suffixes, strict=False):
        assert module.ours(args).result().out.endswith(f"/gen created{suffix}"), args


@pytest.mark.parametrize("version", VERSIONS)
def test_bad_input_fails_alike(version: str, module: Module) -> None:
    available(version)
    failures = [f for f in (compare(version, module, a, BAD_DIFFERENCES, first_line_only=True) for a in BAD) if f]
    assert not failures, "\n".join(failures)


def _server_view(obj: dict[str, Any]) -> dict[str, Any]:
    """What a generator decided: labels, annotations, spec, rules, subjects, roleRef — not what the
    apiserver allocated (a Service's clusterIP(s) and nodePorts)."""
    meta = {k: v for k, v in obj["metadata"].items() if k in ("labels", "annotations")}
    view = {"meta": meta, "spec": obj.get("spec"), "rules": obj.get("rules"), "subjects": obj.get("subjects"),
            "roleRef": obj.get("roleRef"), "aggregationRule": obj.get("aggregationRule"), "type": obj.get("type"),
            "data": obj.get("data"), "binaryData": obj.get("binaryData")}
    spec = view["spec"]
    if obj.get("kind") == "Service" and isinstance(spec, dict):
        for key in ("clusterIP", "clusterIPs"):
            spec.pop(key, None)
        for port in spec.get("ports") or []:
            port.pop("nodePort", None)
    return view


#: -v=8's log of the request body kubectl sends
REQUEST_BODY = re.compile(r'"Request Body" body="(.*)"$')


def script(mod: Module, ns: str, run: Callable[..., Result]) -> list[Any]:
    """One CLI's run of the generators that create objects, in namespace ``ns``: the results and the
    views of the stored objects, in order (the scripts of all CLIs must return the same)."""
    out: list[Any] = []
    with httpx.Client(base_url=mod.apiserver.url) as h:
        def same(kind: str, name: str) -> None:
            r = h.get(PATHS[kind].format(ns=ns, name=name))
            out.append((kind, name, r.status_code, _server_view(r.json())))

        def step(*args: str) -> None:
            out.append((args, run(list(args))))

        step("create", "deployment", "web", "--image=minik8s/nginx", "--replicas=2", "--port=80")
        same("deploy", "web")
        step("create", "deployment", "web", "--image=minik8s/nginx")  # AlreadyExists
        step("create", "service", "nodeport", "web-np", "--tcp=80:8080")
        same("svc", "web-np")
        step("create", "serviceaccount", "web-sa")
        step("create", "role", "web-role", "--verb=get", "--resource=pods,deploy")
        same("role", "web-role")
        step("create", "rolebinding", "web-rb", "--role=web-role", "--serviceaccount=x:web-sa")
        same("rolebinding", "web-rb")
        step("run", "web-pod", "--image=minik8s/busybox", "--labels=app=web-pod", "--port=8080", "--", "sleep", "60")
        same("pod", "web-pod")
        step("expose", "deployment", "web", "--port=8080", "--target-port=80")
        same("svc", "web")
        step("expose", "pod", "web-pod", "--name=web-pod-svc", "--type=NodePort")
        same("svc", "web-pod-svc")
        step("set", "image", "deployment/web", "nginx=minik8s/nginx:2")
        step("set", "image", "deployment/web", "nginx=minik8s/nginx:2")  # unchanged: nothing printed
        step("set", "image", "deployment/web", "nope=x")
        step("set", "env", "deployment/web", "A=1", "B=2")
        step("set", "env", "deployment/web", "A-")
        step("set", "env", "deployment/web", "--list")
        same("deploy", "web")
        step("autoscale", "deployment", "web", "--min=2", "--max=5", "--cpu-percent=50")
        step("autoscale", "deployment", "web", "--max=1", "--min=3")
        step("create", "secret", "tls", "web-tls", f"--cert={CERT}", f"--key={KEY}")
        same("secret", "web-tls")
        step("create", "secret", "tls", "web-tls", f"--cert={CERT}", f"--key={KEY}", "--append-hash")
        step("create", "secret", "docker-registry", "web-reg", "--docker-server=r.io", "--docker-username=u",
             "--docker-password=p", "--docker-email=e@x.io")
        same("secret", "web-reg")
        hashed = (("secret", "web-env", ["secret", "generic", "web-env", f"--from-env-file={ENV_FILE}"]),
                  ("cm", "web-cm", ["configmap", "web-cm", f"--from-file={BINARY}", "--from-literal=a=b"]))
        for kind, name, args in hashed:
            step("create", *args, "--append-hash")
            printed = out[-1][1].out.split()[0].split("/")[-1]  # kind/NAME-HASH created
            assert printed.startswith(f"{name}-"), printed
            same(kind, printed)
            step("create", *args, "--append-hash")  # AlreadyExists: the same name again
        step("create", "ingress", "web-ing", "--rule=web.example.com/app*=web:80,tls=web-tls",
             "--rule=web.example.com/=web:http", "--class=nginx", "--annotation=a=b")
        same("ing", "web-ing")
        step("create", "token", "nosuch-sa")
        out.append(("token", token_claims(ns, run(["create", "token", "web-sa", "--audience=a", "--audience=b",
                                                    "--duration=2h"]))))
        out.append(("token default", token_claims(ns, run(["create", "token", "web-sa"]))))
        # kubectl create deployment x --image=y --dry-run=client -o yaml | kubectl apply -f -  (twice)
        manifest = run(["create", "deployment", "piped", "--image=minik8s/nginx", *DRY]).out
        out.append(("apply", run(["apply", "-f", "-"], stdin=manifest)))
        verbose = ["-v=8"] if ns != "gen-minik8s" else []  # the official one's log shows the patch it sends
        again = run(["apply", "-f", "-", *verbose], stdin=manifest)
        patches = [json.loads(f'"{m.group(1)}"') for m in map(REQUEST_BODY.search, again.err.splitlines())
                   if m and m.group(1).startswith("{")]
        out.append(("apply again", Result(again.code, again.out, "" if verbose else again.err), patches))
    return out


def token_claims(ns: str, result: Result) -> tuple[int, str, Any]:
    """What ``create token`` printed, comparable across CLIs and runs: the exit code, stderr and the
    token's claims ``aud``, ``sub`` (the namespace written ``NS``) and ``exp - iat``; the token is
    printed without a newline."""
    if result.code or result.out.endswith("\n"):
        return result.code, result.err, result.out
    payload = result.out.split(".")[1]
    claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    return result.code, result.err, (claims["aud"], claims["sub"].replace(f":{ns}:", ":NS:"),
                                     claims["exp"] - claims["iat"])


@pytest.mark.parametrize("version", VERSIONS)
def test_created_objects_and_lines(version: str, module: Module) -> None:
    """Each CLI runs the same script in its own namespace: the lines printed and the objects stored
    are the same (stderr up to the listed differences)."""
    available(version)
    ours, official = module.scripts["minik8s"].result(), module.scripts[version].result()
    assert len(ours) == len(official)
    tokens = {entry[0]: entry[1] for entry in ours if entry[0] in ("token", "token default")}
    assert tokens == {"token": (0, "", (["a", "b"], "system:serviceaccount:NS:web-sa", 7200)),
                      "token default": (0, "", (["https://kubernetes.default.svc.cluster.local"],
                                                "system:serviceaccount:NS:web-sa", 3600))}, tokens
    for mine, theirs in zip(ours[:-2], official[:-2], strict=True):
        if isinstance(mine[-1], Result):
            want, got = tolerate(("1.37-deprecated-cpu-percent",), version, theirs[-1], mine[-1])
            assert got == want, (mine[0], want, got)
        else:
            assert mine == theirs


@pytest.mark.parametrize("version", VERSIONS)
def test_dry_run_yaml_pipes_into_apply(version: str, module: Module) -> None:
    """``kubectl create deployment piped --image=... --dry-run=client -o yaml | kubectl apply -f -``,
    twice: ``created``, then ``unchanged`` — except the official 1.32's second apply, which sends a
    patch for the manifest's ``creationTimestamp: null`` and says ``configured`` (listed:
    ``apply-creationTimestamp-null``)."""
    available(version)
    ours, official = module.scripts["minik8s"].result(), module.scripts[version].result()
    assert ours[-2][1] == official[-2][1] == Result(0, "deployment.apps/piped created\n", "")
    assert ours[-1][1] == Result(0, "deployment.apps/piped unchanged\n", "")
    again, patch = official[-1][1], official[-1][2]
    if version == "1.32":
        assert again.out == "deployment.apps/piped configured\n"
        # kube-apiserver 1.32 returns the template's zero creationTimestamp as null and gets only the
        # top-level half; minik8s' apiserver omits the template's, so the patch carries both
        assert patch == ['{"metadata":{"creationTimestamp":null},"spec":{"template":{"metadata":'
                         '{"creationTimestamp":null}}}}'], patch
    else:  # 1.37's manifest has no creationTimestamp: null, and nothing else differs
        assert (again.out, patch) == ("deployment.apps/piped unchanged\n", []), (again, patch)
    official_again, ours_again = tolerate(("apply-creationTimestamp-null",), version, again, ours[-1][1])
    assert ours_again == official_again
