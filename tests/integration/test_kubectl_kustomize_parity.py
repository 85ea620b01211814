"""minik8s' kubectl against the official one (v1.32 and v1.37, :mod:`tests.realkubectl`) for
kustomize and prune: ``kubectl kustomize DIR``, ``apply -k``/``diff -k``/``delete -k`` and
``apply --prune`` (``-l``, ``--all``, ``--prune-allowlist``, the dry runs; ``--prune-whitelist``,
which kubectl 1.32 no longer has).

The kustomizations are written under the module's temporary directory: a base (two generators
with hashes, from literals, files and env files; a Deployment that refers to them; a Service) and
an overlay on it (prefix, suffix, commonLabels, labels, commonAnnotations, images, replicas, a
merging generator, strategic merge and JSON 6902 patches in all three spellings).  ``kubectl
kustomize`` must print the same bytes; ``apply -k`` runs as one script per CLI, each in a namespace
of its own (a kustomization per CLI that sets ``namespace`` on the overlay), and the lines printed
and the objects stored must be the same; so must the prune scripts' lines and what remains.  Bad
input must fail alike (exit code and first stderr line).  Tolerated differences are listed, with
their reasons, in :data:`tests.support.kubectl_parity.KNOWN_DIFFERENCES`.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
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
CLIS = ["minik8s", *VERSIONS]

DEPLOY = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels:
    app: web
spec:
  replicas: 1
  selector:
    matchLabels:
      app: web
  template:
    metadata:
      labels:
        app: web
    spec:
      containers:
      - name: nginx
        image: nginx:1.25
        envFrom:
        - configMapRef:
            name: app-config
        env:
        - name: PASSWORD
          valueFrom:
            secretKeyRef:
              name: creds
              key: password
        volumeMounts:
        - name: config
          mountPath: /etc/app
      - name: sidecar
        image: busybox@sha256:1111111111111111111111111111111111111111111111111111111111111111
        command: ["sleep", "3600"]
      volumes:
      - name: config
        configMap:
          name: app-config
      - name: creds
        secret:
          secretName: creds
"""
SERVICE = """\
apiVersion: v1
kind: Service
metadata:
  name: web
spec:
  selector:
    app: web
  ports:
  - port: 80
    targetPort: 8080
"""
#: path -> content of every kustomization the tests use (``{cli}``: one directory per CLI).
TREE: dict[str, str] = {
    "base/kustomization.yaml": """\
resources:
- deploy.yaml
- svc.yaml
generatorOptions:
  labels:
    generated: "yes"
configMapGenerator:
- name: app-config
  literals:
  - FOO=bar
  - QUOTED="a b"
  files:
  - conf/app.properties
  - renamed.txt=conf/other.txt
  envs:
  - conf/app.env
secretGenerator:
- name: creds
  literals:
  - password=s3cret<&>
  options:
    annotations:
      kind-of: secret
""",
    "base/deploy.yaml": DEPLOY,
    "base/svc.yaml": SERVICE,
    "base/conf/app.properties": "color=blue\nsize=10\n",
    "base/conf/other.txt": "just text\n",
    "base/conf/app.env": "# a comment\n\nLEVEL=debug\n  SPACED=yes\n",
    "overlay/kustomization.yaml": """\
resources:
- ../base
namePrefix: p-
nameSuffix: -v1
commonLabels:
  env: prod
labels:
- pairs:
    team: blue
  includeTemplates: true
- pairs:
    tier: front
  includeSelectors: true
commonAnnotations:
  note: "42"
images:
- name: nginx
  newName: registry.local/nginx
  newTag: "1.26"
- name: busybox
  digest: sha256:2222222222222222222222222222222222222222222222222222222222222222
replicas:
- name: web
  count: 3
configMapGenerator:
- name: app-config
  behavior: merge
  literals:
  - FOO=baz
  - EXTRA=1
secretGenerator:
- name: plain
  type: kubernetes.io/basic-auth
  literals:
  - username=admin
  - password=x
  options:
    disableNameSuffixHash: true
patches:
- path: replicas-patch.yaml
- target:
    kind: Deployment
    name: web
  patch: |-
    - op: add
      path: /spec/template/spec/containers/0/args
      value: ["--port", "8080"]
- target:
    version: v1
    kind: Service
  patch: |-
    apiVersion: v1
    kind: Service
    metadata:
      name: ignored
    spec:
      type: NodePort
patchesStrategicMerge:
- |-
  apiVersion: apps/v1
  kind: Deployment
  metadata:
    name: web
  spec:
    template:
      spec:
        containers:
        - name: nginx
          resources:
            limits:
              memory: 64Mi
patchesJson6902:
- target:
    group: apps
    version: v1
    kind: Deployment
    name: web
  path: json-patch.yaml
""",
    "overlay/replicas-patch.yaml": """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  minReadySeconds: 5
""",
    "overlay/json-patch.yaml": """\
- op: replace
  path: /spec/revisionHistoryLimit
  value: 4
""",
    # the overlay in a namespace of its own, with the Namespace object: the legacy order
    "namespaced/kustomization.yaml": "resources:\n- ns.yaml\n- ../overlay\nnamespace: kz-demo\n",
    "namespaced/ns.yaml": "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: kz-demo\n",
    "apply-{cli}/kustomization.yaml": "resources:\n- ../overlay\nnamespace: kz-{cli}\n",
    # workloads: StatefulSet, CronJob, Job, PDB, RoleBinding; a binary file; a deleting patch by labels
    "workloads/res.yaml": """\
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: db
  labels: {tier: db}
spec:
  serviceName: db
  selector:
    matchLabels: {app: db}
  template:
    metadata:
      labels: {app: db}
    spec:
      initContainers:
      - name: init
        image: reg.local:5000/tools/init:1.0
      containers:
      - name: db
        image: postgres
        envFrom:
        - secretRef:
            name: dbpass
  volumeClaimTemplates:
  - metadata:
      name: data
    spec:
      accessModes: [ReadWriteOnce]
      resources:
        requests:
          storage: 1Gi
---
apiVersion: batch/v1
kind: CronJob
metadata:
  name: backup
spec:
  schedule: "0 * * * *"
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: Never
          containers:
          - name: b
            image: postgres:15@sha256:aaaa
            env:
            - name: X
              valueFrom:
                configMapKeyRef:
                  name: cfg
                  key: k
          volumes:
          - name: p
            projected:
              sources:
              - configMap:
                  name: cfg
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  name: db
spec:
  minAvailable: 1
  selector:
    matchLabels: {app: db}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: rb
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: r}
subjects:
- kind: ServiceAccount
  name: default
- kind: ServiceAccount
  name: other
  namespace: elsewhere
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: doomed
  labels: {delete: me}
---
apiVersion: batch/v1
kind: Job
metadata:
  name: once
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: j
        image: busybox
""",
    "workloads/kustomization.yaml": """\
resources:
- res.yaml
namespace: ns4
nameSuffix: -x
commonLabels:
  app.kubernetes.io/name: four
labels:
- pairs:
    plain: "true"
generatorOptions:
  disableNameSuffixHash: false
  immutable: true
  annotations:
    gen: "1"
configMapGenerator:
- name: cfg
  files:
  - files/blob.bin
  envs:
  - files/e.env
secretGenerator:
- name: dbpass
  namespace: ns4
  literals:
  - PGPASSWORD=pw
  options:
    immutable: false
images:
- name: postgres
  newName: mirror/postgres
- name: reg.local:5000/tools/init
  newTag: "2.0"
- name: busybox
  newTag: latest
patches:
- target:
    labelSelector: delete=me
  patch: |-
    $patch: delete
    apiVersion: v1
    kind: ConfigMap
    metadata:
      name: whatever
- target:
    kind: StatefulSet
  patch: |-
    - op: replace
      path: /spec/replicas
      value: 2
""",
    "workloads/files/e.env": "k=v\n",
    # references that follow renames: ServiceAccount, Role, Service, PVC, TLS Secret; an overlay replacing a
    # generated Secret
    "refs/res.yaml": """\
apiVersion: v1
kind: ServiceAccount
metadata:
  name: sa
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: r
rules: []
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: rb
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: r}
subjects:
- kind: ServiceAccount
  name: sa
- kind: ServiceAccount
  name: sa
  namespace: other
---
apiVersion: v1
kind: Service
metadata:
  name: web
spec:
  ports: [{port: 80}]
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: data
spec:
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 1Gi}}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: ing
spec:
  tls:
  - secretName: tls
  rules:
  - http:
      paths:
      - path: /
        pathType: Prefix
        backend:
          service:
            name: web
            port: {number: 80}
---
apiVersion: v1
kind: Pod
metadata:
  name: p
spec:
  serviceAccountName: sa
  containers:
  - name: c
    image: busybox
  volumes:
  - name: d
    persistentVolumeClaim:
      claimName: data
""",
    "refs/kustomization.yaml": """\
resources:
- res.yaml
namePrefix: pre-
secretGenerator:
- name: tls
  type: kubernetes.io/tls
  literals:
  - tls.crt=x
  - tls.key=y
- name: gen
  behavior: create
  literals: [a=b]
""",
    "refs-overlay/kustomization.yaml": """\
resources:
- ../refs
nameSuffix: -s
secretGenerator:
- name: gen
  behavior: replace
  literals: [c=d]
""",
    # a namespace for binding subjects; a patch file of two documents, one deleting; a target by name pattern
    "patched/res.yaml": """\
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: crb
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: view}
subjects:
- kind: ServiceAccount
  name: sa
- kind: ServiceAccount
  name: default
  namespace: foo
- kind: User
  name: bob
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: one
data: {a: "1"}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: two
data: {a: "2"}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: three
data: {a: "3"}
""",
    "patched/p.yaml": """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: one
data:
  b: "x"
---
$patch: delete
apiVersion: v1
kind: ConfigMap
metadata:
  name: two
""",
    "patched/kustomization.yaml": """\
resources:
- res.yaml
namespace: eight
patchesStrategicMerge:
- p.yaml
patches:
- target:
    kind: ConfigMap
    name: "t.*"
  patch: |-
    - op: add
      path: /data/z
      value: "zz"
""",
    # bad input
    "nested-missing/kustomization.yaml": "resources:\n- ../empty-dir\n",
    "unknown-field/kustomization.yaml": "resources:\n- ../base\nfoo: 1\n",
    "unsupported/kustomization.yaml": "resources:\n- ../base\nvars: []\n",
    "missing-resource/kustomization.yaml": "resources:\n- nothere.yaml\n",
    "empty-dir/.keep": "",
    # prune: v1 has three labelled objects, v2 keeps one
    "prune/v1/objects.yaml": """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: keep
  labels:
    app: prune
data:
  a: "1"
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: gone
  labels:
    app: prune
data:
  b: "2"
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: gone-deploy
  labels:
    app: prune
spec:
  selector:
    matchLabels:
      app: gone
  template:
    metadata:
      labels:
        app: gone
    spec:
      containers:
      - name: c
        image: minik8s/pause
""",
    "prune/v2/objects.yaml": """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: keep
  labels:
    app: prune
data:
  a: "1"
""",
}
_LONG = " ".join(["word"] * 30)
#: YAML as Go writes it: strings Go reads as numbers or booleans quoted, lines folded at 80 columns,
#: double-quoted strings broken as Go breaks them; a List in JSON; a custom kind; generator files
TREE.update({
    "yaml-edges/res.json": json.dumps({"apiVersion": "v1", "kind": "List", "items": [
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "edge", "annotations": dict(zip(
            "abcdefghijklmnopqrstuvwxyz",
            ["yes", "on", "1.0", "null", "~", "", "2024-01-01", "0x1F", "a: b", "- x", "#c", "x #y", "' q", '"dq',
             "é ü", "1e3", "012", "*star", "&amp", "!bang", "%pct", "@at", "`bt", "{}", "[x]", "a\tb"],
            strict=True))},
         "data": {"empty": "", "long": " ".join(["aaaaaaaaaa"] * 10), "trail": "x\n\n", "sp": " lead",
                  "num": "12345678901234567890"}},
        {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"},
         "spec": {"n": None, "l": [], "m": {}, "f": 1.5, "i": 3, "b": True, "big": 12345678901234567890}}]}),
    "yaml-edges/long.json": json.dumps({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {
        "name": "l", "annotations": {
        "q1": "key: " + _LONG, "q2": " " + _LONG, "q3": _LONG + " ", "q4": "#" + _LONG, "q5": "x" * 120,
        "q6": _LONG.replace(" ", "\t", 3), "q7": "é" * 50 + " " + "ü" * 50}}, "data": {"cmd": "- " + _LONG}}),
    "yaml-edges/s.env": "user=admin\npass=p@ss word\n",
    "yaml-edges/multi.txt": "line1\nline2  \n\ttabbed\n",
    "yaml-edges/kustomization.yaml": "resources:\n- res.json\n- long.json\nsecretGenerator:\n- name: s\n"
                                     "  envs: [s.env]\n  files: [multi.txt]\nconfigMapGenerator:\n- name: m\n"
                                     "  files: [multi.txt]\n  namespace: gen-ns\nnamespace: eleven\n",
})
#: components: a generator merged into by a component, a patch, a component's resource and labels; a
#: component given as a resource and a kustomization given as a component (bad input)
TREE.update({
    "components/app/kustomization.yaml": """\
resources:
- deploy.yaml
- svc.yaml
components:
- ../comp
- ../comp2
namePrefix: a-
configMapGenerator:
- name: app-config
  literals: [X=1]
""",
    "components/comp/kustomization.yaml": """\
apiVersion: kustomize.config.k8s.io/v1alpha1
kind: Component
configMapGenerator:
- name: app-config
  behavior: merge
  literals: [FROMCOMP=yes]
patches:
- patch: |-
    apiVersion: apps/v1
    kind: Deployment
    metadata:
      name: web
    spec:
      replicas: 7
""",
    "components/comp2/kustomization.yaml": """\
apiVersion: kustomize.config.k8s.io/v1alpha1
kind: Component
resources:
- extra.yaml
labels:
- pairs: {comp: two}
""",
    "components/comp2/extra.yaml": """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: extra
""",
    "components/b1/kustomization.yaml": """\
resources:
- ../comp
""",
    "components/b2/kustomization.yaml": """\
components:
- ../app
""",
    "components/app/deploy.yaml": DEPLOY,
    "components/app/svc.yaml": SERVICE,
})
#: sortOptions: fifo (with a generated ConfigMap), the same used as a base (its sortOptions do not count),
#: legacy with kinds of its own; objects of one kind in several namespaces and in none
TREE.update({
    "sorted/r.yaml": """\
apiVersion: v1
kind: ConfigMap
metadata: {name: b, namespace: z}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: a, namespace: z}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: c, namespace: a}
---
apiVersion: v1
kind: Foo
metadata: {name: a}
---
apiVersion: v1
kind: Bar
metadata: {name: a}
---
apiVersion: v1
kind: ValidatingWebhookConfiguration
metadata: {name: a}
""",
    "sorted/fifo/kustomization.yaml": "resources:\n- r.yaml\nsortOptions:\n  order: fifo\n"
                                      "configMapGenerator:\n- name: g\n  literals: [a=b]\n",
    "sorted/nested/kustomization.yaml": "resources:\n- ../fifo\n",
    # kustomize's load restriction: a file above the kustomization's directory is refused
    "sorted/outside/kustomization.yaml": "resources:\n- ../r.yaml\n",
    "sorted/outside-nested/kustomization.yaml": "resources:\n- ../outside\n",
    "sorted/custom/kustomization.yaml": "resources:\n- r.yaml\nsortOptions:\n  order: legacy\n"
                                        "  legacySortOptions:\n    orderFirst: [Foo]\n    orderLast: [ConfigMap]\n",
})
#: replacements: a ConfigMap's data into an image, with a delimiter and index into created fields, a
#: name into a list item by index, into every container's port (its type kept); a generated name
TREE.update({
    "replaced/kustomization.yaml": """\
resources:
- deploy.yaml
- cm.yaml
replacements:
- source:
    kind: ConfigMap
    name: src
    fieldPath: data.IMAGE
  targets:
  - select:
      kind: Deployment
    fieldPaths:
    - spec.template.spec.containers.[name=nginx].image
- source:
    kind: ConfigMap
    name: src
    fieldPath: data.HOST
    options:
      delimiter: "."
      index: 1
  targets:
  - select:
      kind: Deployment
      name: web
    fieldPaths:
    - metadata.annotations.host
    - spec.template.metadata.labels.app
    options:
      create: true
- source:
    kind: ConfigMap
    name: src
  targets:
  - select:
      kind: Deployment
    reject:
    - name: other
    fieldPaths:
    - spec.template.spec.containers.0.name
- source:
    kind: ConfigMap
    name: src
    fieldPath: data.PORT
  targets:
  - select:
      kind: Deployment
    fieldPaths:
    - spec.template.spec.containers.*.ports.0.containerPort
""",
    "replaced/cm.yaml": """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: src
data:
  IMAGE: nginx:9.9
  HOST: a.b.c
  PORT: "8080"
""",
    "replaced/deploy.yaml": """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 1
  selector:
    matchLabels:
      app: web
  template:
    metadata:
      labels:
        app: web
    spec:
      containers:
      - name: nginx
        image: nginx:1.25
        envFrom:
        - configMapRef:
            name: app-config
        ports:
        - containerPort: 80
""",
    # a target field that is not there, without create
    "replaced-missing/kustomization.yaml": "resources:\n- deploy.yaml\nreplacements:\n- source:\n"
                                           "    kind: Deployment\n  targets:\n  - select:\n      kind: Deployment\n"
                                           "    fieldPaths:\n    - spec.nothere\n",
    "replaced-missing/deploy.yaml": DEPLOY,
    "replaced-generated/kustomization.yaml": """\
resources:
- deploy.yaml
namePrefix: x-
configMapGenerator:
- name: app-config
  literals: [A=1]
replacements:
- source:
    kind: ConfigMap
    name: app-config
  targets:
  - select:
      kind: Deployment
    fieldPaths:
    - metadata.annotations.[config.example.com/name]
    options:
      create: true
""",
    "replaced-generated/deploy.yaml": DEPLOY,
})
#: ``kubectl kustomize DIR``: the same bytes on stdout and stderr.
BUILDS = ["base", "overlay", "namespaced", "workloads", "refs", "refs-overlay", "patched", "yaml-edges",
          "components/app", "sorted/fifo", "sorted/nested", "sorted/custom",
          "replaced", "replaced-generated"]
#: Files that are not text.
BINARY = {"workloads/files/blob.bin": b"\x00\x01\xff binary"}
#: Bad input: the exit code and the first stderr line must match ({root}: the fixtures' folder).
BAD = [
    ["kustomize", "{root}/empty-dir"],
    ["kustomize", "{root}/unknown-field"],
    ["kustomize", "{root}/nosuch"],
    ["kustomize", "{root}/missing-resource"],
    ["kustomize", "{root}/nested-missing"],
    ["kustomize", "{root}/sorted/outside"],
    ["kustomize", "{root}/sorted/outside-nested"],
    ["kustomize", "{root}/replaced-missing"],
    ["kustomize", "{root}/components/b1"],
    ["kustomize", "{root}/components/b2"],
    ["apply", "-k", "{root}/overlay", "-f", "{root}/prune/v1"],
    ["apply", "-k", "{root}/empty-dir"],
    ["apply", "--prune", "-f", "{root}/prune/v1"],
    ["apply", "--prune", "--all", "-l", "app=prune", "-f", "{root}/prune/v1"],
    ["delete", "-k", "{root}/overlay", "-f", "{root}/prune/v1"],
    ["diff", "-k", "{root}/unknown-field"],
    ["get", "-k", "{root}/overlay", "-f", "{root}/prune/v1"],
    ["get", "configmaps", "-k", "{root}/overlay"],
    # deprecated in kubectl 1.26, removed by 1.32
    ["apply", "--prune", "--all", "--prune-whitelist=core/v1/ConfigMap", "-f", "{root}/prune/v1"],
]
BAD_DIFFERENCES = ("1.32-kustomize-klog", "1.37-flag-error-case")
#: What the apply -k script stores, compared by view.
KINDS = {"configmaps": "/api/v1/namespaces/{ns}/configmaps", "secrets": "/api/v1/namespaces/{ns}/secrets",
         "services": "/api/v1/namespaces/{ns}/services",
         "deployments": "/apis/apps/v1/namespaces/{ns}/deployments"}
LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"


@dataclass
class Module:
    apiserver: APIServer
    home: Path
    runs: Runs
    scripts: dict[str, Future[list[Any]]] = field(default_factory=dict)

    @property
    def root(self) -> Path:
        return self.home / "k"

    def env(self) -> dict[str, str]:
        return {**os.environ, "KUBECONFIG": "/nonexistent", "HOME": str(self.home), "COLUMNS": "200",
                "KUBECTL_INTERACTIVE_DELETE": "false"}

    def args(self, args: list[str], ns: str = "kz") -> list[str]:
        return ["--kubeconfig", str(self.home / "kubeconfig"), "-n", ns,
                *(a.format(root=self.root) for a in args)]

    def ours(self, args: list[str]) -> Future[Result]:
        return self.runs.minik8s(self.args(args), self.env())

    def official(self, version: str, args: list[str]) -> Future[Result]:
        path, _ = find(version)
        assert path is not None
        return self.runs.official(path, ["--cache-dir", str(self.home / f"cache-{version}"), *self.args(args)],
                                  self.env())

    def run(self, cli: str, args: list[str], ns: str) -> Result:
        """One uncached run of ``cli`` (``minik8s`` or an official version)."""
        if cli == "minik8s":
            return self.runs.run_minik8s(self.args(args, ns), self.env())
        path, _ = find(cli)
        assert path is not None
        return self.runs.official(path, ["--cache-dir", str(self.home / f"cache-{cli}"), *self.args(args, ns)],
                                  self.env()).result()


def slug(cli: str) -> str:
    return cli.replace(".", "-")


def available(version: str) -> None:
    path, why = find(version)
    if path is None:
        pytest.skip(why)


def write_tree(root: Path) -> None:
    for rel, text in TREE.items():
        for cli in (CLIS if "{cli}" in rel else [""]):
            path = root / rel.format(cli=slug(cli))
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text.format(cli=slug(cli)) if "{cli}" in text else text)
    for rel, data in BINARY.items():
        (root / rel).write_bytes(data)
    for rel in ("sorted/fifo/r.yaml", "sorted/custom/r.yaml"):
        (root / rel).write_text(TREE["sorted/r.yaml"])


@pytest.fixture(scope="module")
def module(apiserver: APIServer, runs: Runs, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Module]:
    """The fixtures written, the namespaces made, every stateless invocation submitted, the scripts
    started (one per CLI, each in its own namespaces)."""
    home = tmp_path_factory.mktemp("kustomize")
    (home / "kubeconfig").write_text(render(apiserver.url))
    mod = Module(apiserver, home, runs)
    write_tree(mod.root)
    with httpx.Client(base_url=apiserver.url) as h:
        for ns in ["kz", *(f"{p}-{slug(c)}" for p in ("kz", "pr", "pa") for c in CLIS)]:
            r = h.post("/api/v1/namespaces", json={"metadata": {"name": ns}})
            assert r.status_code in (201, 409), r.text
    present = [v for v in VERSIONS if find(v)[0] is not None]
    for args in [["kustomize", f"{{root}}/{d}"] for d in BUILDS] + BAD:
        mod.ours(args)
        for version in present:
            mod.official(version, args)
    scripts = ThreadPoolExecutor(2 * len(CLIS))
    for cli in ["minik8s", *present]:
        mod.scripts[f"apply-{cli}"] = scripts.submit(apply_script, mod, cli)
        mod.scripts[f"prune-{cli}"] = scripts.submit(prune_script, mod, cli)
    try:
        yield mod
    finally:
        scripts.shutdown(wait=True, cancel_futures=True)


def compare(version: str, mod: Module, args: list[str], differences: tuple[str, ...] = (),
            first_line_only: bool = False) -> str:
    official, ours = tolerate(differences, version, mod.official(version, args).result(), mod.ours(args).result())
    if first_line_only:
        official = Result(official.code, "", (official.err.strip().splitlines() or [""])[0])
        ours = Result(ours.code, "", (ours.err.strip().splitlines() or [""])[0])
    return "" if official == ours else f"{args}:\n  official {official}\n  minik8s  {ours}"


@pytest.mark.parametrize("version", VERSIONS)
def test_kustomize_builds_match(version: str, module: Module) -> None:
    """``kubectl kustomize DIR``: the same YAML, byte for byte, and the same deprecation warnings."""
    available(version)
    failures = [f for f in (compare(version, module, ["kustomize", f"{{root}}/{d}"]) for d in BUILDS) if f]
    assert not failures, "\n".join(failures)
    built = module.ours(["kustomize", "{root}/namespaced"]).result().out
    assert built.startswith("apiVersion: v1\nkind: Namespace\n"), built
    assert "name: p-app-config-v1-" in built and "name: p-plain-v1\n" in built


@pytest.mark.parametrize("version", VERSIONS)
def test_bad_input_fails_alike(version: str, module: Module) -> None:
    available(version)
    failures = [f for f in (compare(version, module, a, BAD_DIFFERENCES, first_line_only=True) for a in BAD) if f]
    assert not failures, "\n".join(failures)


def test_unsupported_field_is_an_error(module: Module) -> None:
    """A field kustomize has and minik8s does not implement fails with one clear line, never silently."""
    result = module.ours(["kustomize", "{root}/unsupported"]).result()
    assert (result.code, result.out) == (1, ""), result
    assert result.err == "error: the kustomization field 'vars' is not supported by minik8s' kubectl\n"


def _view(obj: dict[str, Any], ns: str) -> dict[str, Any]:
    """What apply decided, the CLI's namespace written NS; the last-applied annotation's presence."""
    meta = obj["metadata"]
    annotations = dict(meta.get("annotations") or {})
    marked = annotations.pop(LAST_APPLIED, None) is not None
    spec = obj.get("spec")
    if obj.get("kind") == "Service" and isinstance(spec, dict):
        spec = {k: v for k, v in spec.items() if k not in ("clusterIP", "clusterIPs")}
        spec["ports"] = [{k: v for k, v in p.items() if k != "nodePort"} for p in spec.get("ports") or []]
    view = {"name": meta["name"], "labels": meta.get("labels"), "annotations": annotations, "marked": marked,
            "data": obj.get("data"), "binaryData": obj.get("binaryData"), "type": obj.get("type"), "spec": spec}
    return json.loads(json.dumps(view).replace(ns, "NS"))


def _normalised(result: Result, ns: str) -> Result:
    return Result(result.code, result.out.replace(ns, "NS"), result.err.replace(ns, "NS"))


def apply_script(mod: Module, cli: str) -> list[Any]:
    """``apply -k`` twice, the stored objects, ``get -k``, ``diff -k`` and ``delete -k``, in ``kz-<cli>``."""
    ns = f"kz-{slug(cli)}"
    directory = f"{{root}}/apply-{slug(cli)}"
    out: list[Any] = []
    out.append(("apply", _normalised(mod.run(cli, ["apply", "-k", directory], ns), ns)))
    out.append(("apply again", _normalised(mod.run(cli, ["apply", "-k", directory], ns), ns)))
    with httpx.Client(base_url=mod.apiserver.url) as h:
        for kind, path in KINDS.items():
            items = h.get(path.format(ns=ns)).json()["items"]
            out.append((kind, [_view(o, ns) for o in items if not o["metadata"]["name"].startswith("default-token")
                               and o["metadata"]["name"] != "kube-root-ca.crt"]))
    for output in ("name", "custom-columns=KIND:.kind,NAME:.metadata.name,NAMESPACE:.metadata.namespace"):
        out.append(("get", _normalised(mod.run(cli, ["get", "-k", directory, "-o", output], ns), ns)))
    diffed = mod.run(cli, ["diff", "-k", directory], ns)
    out.append(("diff", diffed.code, diffed.out))
    out.append(("delete", _normalised(mod.run(cli, ["delete", "-k", directory, "--wait=false"], ns), ns)))
    return out


def prune_script(mod: Module, cli: str) -> list[Any]:
    """``apply --prune`` with ``-l`` (both dry runs first), then with ``--all`` and an allowlist, and
    an allowlist that names no type; after each, the names left."""
    ns = f"pr-{slug(cli)}"
    out: list[Any] = []
    v1, v2 = ["-f", "{root}/prune/v1"], ["-f", "{root}/prune/v2"]

    def step(*args: str) -> None:
        out.append((args, _normalised(mod.run(cli, list(args), ns), ns)))

    def left() -> None:
        with httpx.Client(base_url=mod.apiserver.url) as h:
            names = [o["metadata"]["name"] for path in (KINDS["configmaps"], KINDS["deployments"])
                     for o in h.get(path.format(ns=ns)).json()["items"] if o["metadata"]["name"] != "kube-root-ca.crt"]
        out.append(("left", names))

    step("apply", *v1)
    step("create", "configmap", "manual", "--from-literal=x=1")  # no last-applied annotation: never pruned
    step("apply", "--prune", "-l", "app=prune", *v2, "--dry-run=client")
    step("apply", "--prune", "-l", "app=prune", *v2, "--dry-run=server")
    left()
    step("apply", "--prune", "-l", "app=prune", *v2)
    left()
    step("apply", *v1)
    step("apply", "--prune", "--all", "--prune-allowlist=core/v1/ConfigMap", "--prune-allowlist=apps/v1/Deployment",
         *v2)
    left()
    step("apply", *v1)
    step("apply", "--prune", "-l", "app=prune", "--prune-allowlist=core/v1/ConfigMap", "-o", "name", *v2)
    left()
    step("apply", "--prune", "-l", "app=prune", "--prune-allowlist=core/v1/Nope", *v2)
    return out


def _compare_script(version: str, module: Module, name: str, differences: tuple[str, ...] = ()) -> None:
    ours, official = module.scripts[f"{name}-minik8s"].result(), module.scripts[f"{name}-{version}"].result()
    assert len(ours) == len(official)
    for mine, theirs in zip(ours, official, strict=True):
        if isinstance(mine[-1], Result):
            want, got = tolerate(differences, version, theirs[-1], mine[-1])
            assert got == want, (mine[0], want, got)
        else:
            assert mine == theirs


@pytest.mark.parametrize("version", VERSIONS)
def test_apply_k_lines_and_objects(version: str, module: Module) -> None:
    """``apply -k`` (created, then unchanged), the objects stored, ``get -k``, ``diff -k`` and ``delete -k``."""
    available(version)
    _compare_script(version, module, "apply", ("1.37-deleted-from-namespace",))
    ours = module.scripts["apply-minik8s"].result()
    assert ours[0][1].code == 0 and "deployment.apps/p-web-v1 created" in ours[0][1].out, ours[0]


@pytest.mark.parametrize("version", VERSIONS)
def test_apply_prune(version: str, module: Module) -> None:
    """``apply --prune``: the pruned lines (with the dry runs' suffixes) and what is left."""
    available(version)
    _compare_script(version, module, "prune", ("1.32-kustomize-klog", "klog-time-pid", "1.37-client-dry-run-unchanged"))
    lines = [step[1].out for step in module.scripts["prune-minik8s"].result() if step[0] != "left"]
    assert "configmap/gone pruned (dry run)\n" in lines[2] and "deployment.apps/gone-deploy pruned" in lines[3]
