"""kubeconfig loading: where to find the apiserver and how to authenticate.

Search order (kubectl's, plus minik8s' own default): an explicit path, then
``$KUBECONFIG`` (colon-separated; the first file that exists), then
``~/.kube/config``, then ``~/.minik8s/kubeconfig`` (written by ``minik8s up``).

Several apiservers: a cluster entry keeps kubectl's one ``server`` and may list more in an
extension (kubeconfig's place for tool-specific data, which kubectl ignores)::

    clusters:
    - name: minik8s
      cluster:
        server: https://10.0.0.1:6443
        extensions:
        - name: minik8s.io/servers
          extension: {servers: [https://10.0.0.2:6443, https://10.0.0.3:6443]}

minik8s' clients then fail over between ``server`` and those (:attr:`ClientConfig.servers`).
"""

from __future__ import annotations

import base64
import os
import ssl
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml


class KubeconfigError(Exception):
    """The kubeconfig is missing, unreadable, or does not name what is asked for."""


#: the cluster extension listing further apiservers (see the module docstring)
SERVERS_EXTENSION = "minik8s.io/servers"


@dataclass
class ClientConfig:
    """Everything the REST client needs to reach one apiserver."""

    server: str = "http://127.0.0.1:6443"
    token: str | None = None
    ca_file: str | None = None
    cert_file: str | None = None
    key_file: str | None = None
    insecure_skip_tls_verify: bool = False
    namespace: str = "default"
    source: str | None = None  # the kubeconfig file it came from
    #: further apiservers of the same cluster (same CA and credentials), tried when ``server`` is unreachable
    fallback_servers: list[str] = field(default_factory=list)

    @property
    def servers(self) -> list[str]:
        """``server`` then the fallbacks, without repeats."""
        return list(dict.fromkeys([self.server, *self.fallback_servers]))

    def ssl_context(self) -> ssl.SSLContext | bool:
        """The TLS settings for httpx (``True`` = system CAs)."""
        if not self.server.startswith("https"):
            return True
        if self.insecure_skip_tls_verify:
            ctx = ssl.create_default_context()
            ctx.check_hostname = False
            ctx.verify_mode = ssl.CERT_NONE
        else:
            ctx = ssl.create_default_context(cafile=self.ca_file)
        if self.cert_file and self.key_file:
            ctx.load_cert_chain(self.cert_file, self.key_file)
        return ctx


def default_paths() -> list[Path]:
    """Candidate kubeconfig files in the order they are tried."""
    paths: list[Path] = []
    env = os.environ.get("KUBECONFIG")
    if env:
        paths += [Path(p).expanduser() for p in env.split(os.pathsep) if p]
    paths.append(Path("~/.kube/config").expanduser())
    paths.append(Path("~/.minik8s/kubeconfig").expanduser())
    return paths


def _materialise(data: str | None, path: str | None, base: Path, suffix: str) -> str | None:
    """A file path for ``*-data`` (base64 PEM) or a path relative to the kubeconfig's folder."""
    if data:
        fd, name = tempfile.mkstemp(prefix="minik8s-", suffix=suffix)
        with os.fdopen(fd, "wb") as fh:
            fh.write(base64.b64decode(data))
        return name
    if path:
        p = Path(path).expanduser()
        return str(p if p.is_absolute() else base / p)
    return None


def load(path: str | os.PathLike[str] | None = None, context: str | None = None) -> ClientConfig:
    """Load a kubeconfig; raises KubeconfigError with a one-line reason."""
    if path:
        candidates = [Path(path).expanduser()]
        if not candidates[0].exists():
            raise KubeconfigError(f"kubeconfig {path} does not exist")
    else:
        candidates = [p for p in default_paths() if p.exists()]
        if not candidates:
            raise KubeconfigError("no kubeconfig found (tried $KUBECONFIG, ~/.kube/config, "
                                  "~/.minik8s/kubeconfig); start a cluster with `minik8s up` or pass --kubeconfig")
    file = candidates[0]
    try:
        doc: dict[str, Any] = yaml.safe_load(file.read_text()) or {}
    except (OSError, yaml.YAMLError) as exc:
        raise KubeconfigError(f"cannot read kubeconfig {file}: {str(exc).splitlines()[0]}") from exc
    ctx_name = context or doc.get("current-context")
    contexts = {c["name"]: c.get("context") or {} for c in doc.get("contexts") or []}
    if not ctx_name or ctx_name not in contexts:
        raise KubeconfigError(f"context {ctx_name!r} not found in {file}")
    ctx = contexts[ctx_name]
    clusters = {c["name"]: c.get("cluster") or {} for c in doc.get("clusters") or []}
    users = {u["name"]: u.get("user") or {} for u in doc.get("users") or []}
    cluster = clusters.get(ctx.get("cluster"))
    if cluster is None or not cluster.get("server"):
        raise KubeconfigError(f"cluster {ctx.get('cluster')!r} of context {ctx_name!r} has no server in {file}")
    user = users.get(ctx.get("user"), {})
    base = file.parent
    token = user.get("token")
    if not token and user.get("tokenFile"):
        token = Path(user["tokenFile"]).read_text().strip()
    fallbacks: list[str] = []
    for ext in cluster.get("extensions") or []:
        if isinstance(ext, dict) and ext.get("name") == SERVERS_EXTENSION:
            listed = (ext.get("extension") or {}).get("servers") or []
            if not isinstance(listed, list) or not all(isinstance(u, str) and u for u in listed):
                raise KubeconfigError(f"extension {SERVERS_EXTENSION} of cluster {ctx.get('cluster')!r} in {file} "
                                      "must hold servers: a list of URLs")
            fallbacks += [u.rstrip("/") for u in listed]
    return ClientConfig(
        fallback_servers=fallbacks,
        server=str(cluster["server"]).rstrip("/"),
        token=token,
        ca_file=_materialise(cluster.get("certificate-authority-data"), cluster.get("certificate-authority"),
                             base, ".crt"),
        cert_file=_materialise(user.get("client-certificate-data"), user.get("client-certificate"), base, ".crt"),
        key_file=_materialise(user.get("client-key-data"), user.get("client-key"), base, ".key"),
        insecure_skip_tls_verify=bool(cluster.get("insecure-skip-tls-verify")),
        namespace=ctx.get("namespace") or "default",
        source=str(file),
    )


def render(server: str, *, name: str = "minik8s", token: str | None = None, ca_file: str | None = None,
           cert_file: str | None = None, key_file: str | None = None, fallback_servers: list[str] | None = None) -> str:
    """A kubeconfig document (YAML) for one cluster/user/context, usable by kubectl and client libraries.

    ``fallback_servers``: further apiservers, in the ``minik8s.io/servers`` cluster extension."""
    cluster: dict[str, Any] = {"server": server}
    if fallback_servers:
        cluster["extensions"] = [{"name": SERVERS_EXTENSION, "extension": {"servers": list(fallback_servers)}}]
    if ca_file:
        cluster["certificate-authority"] = ca_file
    user: dict[str, Any] = {}
    if token:
        user["token"] = token
    if cert_file:
        user["client-certificate"] = cert_file
    if key_file:
        user["client-key"] = key_file
    doc = {
        "apiVersion": "v1", "kind": "Config", "preferences": {},
        "clusters": [{"name": name, "cluster": cluster}],
        "users": [{"name": f"{name}-admin", "user": user}],
        "contexts": [{"name": name, "context": {"cluster": name, "user": f"{name}-admin", "namespace": "default"}}],
        "current-context": name,
    }
    return yaml.safe_dump(doc, sort_keys=False)
