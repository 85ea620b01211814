"""kubeconfig loading: where to find the apiserver and how to authenticate.

Search order (kubectl's, plus minik8s' own default): an explicit path, then
``$KUBECONFIG`` (colon-separated; every file that exists, merged as kubectl merges them:
:func:`merge`), then ``~/.kube/config``, then ``~/.minik8s/kubeconfig`` (written by ``minik8s up``).

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
    #: the kubeconfig user (AuthInfo) the credentials are from
    user_name: str = ""
    #: impersonation (a user's ``as``, ``as-groups``, ``as-uid``; kubectl's ``--as``, ``--as-group``,
    #: ``--as-uid``): sent as ``Impersonate-User``, ``Impersonate-Group``, ``Impersonate-Uid``
    impersonate_user: str = ""
    impersonate_groups: list[str] = field(default_factory=list)
    impersonate_uid: str = ""

    def impersonation_headers(self) -> list[tuple[str, str]]:
        """The ``Impersonate-*`` headers, one ``Impersonate-Group`` per group.  Raises
        KubeconfigError, in client-go's words, for groups or a uid without a user to impersonate."""
        if not self.impersonate_user:
            if self.impersonate_groups or self.impersonate_uid:
                raise KubeconfigError(f"requesting uid, groups or user-extra for {self.user_name} "
                                      "without impersonating a user")
            return []
        headers = [("Impersonate-User", self.impersonate_user)]
        headers += [("Impersonate-Group", group) for group in self.impersonate_groups]
        if self.impersonate_uid:
            headers.append(("Impersonate-Uid", self.impersonate_uid))
        return headers

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


class InvalidConfiguration(KubeconfigError):
    """The kubeconfig does not hold the context asked for (kubectl: ``Error in configuration: ...``)."""


@dataclass
class Kubeconfig:
    """Several kubeconfig files merged as kubectl merges ``$KUBECONFIG``: each named cluster, user and
    context comes from the first file that has it, ``current-context`` from the first file that sets it.

    ``doc`` is the merged document (lists in first-seen order); ``bases`` the folder of the file each
    entry came from (``("clusters", name)`` → folder), against which its relative paths resolve;
    ``files`` the files read, in order."""

    doc: dict[str, Any]
    files: list[Path]
    bases: dict[tuple[str, str], Path] = field(default_factory=dict)

    def entries(self, section: str) -> dict[str, dict[str, Any]]:
        """``section`` (``clusters``, ``users``, ``contexts``) by name: name → the entry's body."""
        key = {"clusters": "cluster", "users": "user", "contexts": "context"}[section]
        return {str(e.get("name")): (e.get(key) or {}) for e in self.doc.get(section) or [] if isinstance(e, dict)}


def _read_file(file: Path) -> dict[str, Any]:
    try:
        doc = yaml.safe_load(file.read_text()) or {}
    except (OSError, yaml.YAMLError) as exc:
        raise KubeconfigError(f"cannot read kubeconfig {file}: {str(exc).splitlines()[0]}") from exc
    if not isinstance(doc, dict):
        raise KubeconfigError(f"cannot read kubeconfig {file}: not a mapping")
    return doc


def merge(files: list[Path]) -> Kubeconfig:
    """The merged kubeconfig of ``files`` (see :class:`Kubeconfig`); KubeconfigError for an unreadable one."""
    merged: dict[str, Any] = {"apiVersion": "v1", "kind": "Config", "preferences": {}}
    out = Kubeconfig(merged, list(files))
    for file in files:
        doc = _read_file(file)
        if doc.get("current-context") and not merged.get("current-context"):
            merged["current-context"] = doc["current-context"]
        if isinstance(doc.get("preferences"), dict) and not merged["preferences"]:
            merged["preferences"] = doc["preferences"]
        for section in ("clusters", "users", "contexts"):
            for entry in doc.get(section) or []:
                if not isinstance(entry, dict) or not entry.get("name"):
                    continue
                name = str(entry["name"])
                if (section, name) in out.bases:
                    continue
                merged.setdefault(section, []).append(entry)
                out.bases[(section, name)] = file.parent
    return out


def read(path: str | os.PathLike[str] | None = None) -> Kubeconfig:
    """The kubeconfig kubectl would use: ``path`` alone when given (KubeconfigError when missing), else
    the existing files of ``$KUBECONFIG`` merged, else ``~/.kube/config`` or ``~/.minik8s/kubeconfig``;
    an empty one when there is none."""
    if path:
        file = Path(path).expanduser()
        if not file.exists():
            raise KubeconfigError(f"kubeconfig {path} does not exist")
        return merge([file])
    env = [Path(p).expanduser() for p in os.environ.get("KUBECONFIG", "").split(os.pathsep) if p]
    listed = [p for p in env if p.exists()]
    if listed:
        return merge(listed)
    for candidate in default_paths()[len(env):]:
        if candidate.exists():
            return merge([candidate])
    return merge([])


def load(path: str | os.PathLike[str] | None = None, context: str | None = None, *, user: str | None = None,
         cluster: str | None = None) -> ClientConfig:
    """Load a kubeconfig (:func:`read`) for ``context`` (default: its current one), with kubectl's
    ``--user`` and ``--cluster`` overrides; raises KubeconfigError with a one-line reason
    (InvalidConfiguration for a context it does not hold)."""
    config = read(path)
    if not config.files:
        raise KubeconfigError("no kubeconfig found (tried $KUBECONFIG, ~/.kube/config, "
                              "~/.minik8s/kubeconfig); start a cluster with `minik8s up` or pass --kubeconfig")
    file = config.files[0]
    doc = config.doc
    ctx_name = context or doc.get("current-context")
    contexts = config.entries("contexts")
    if not ctx_name or ctx_name not in contexts:
        raise InvalidConfiguration(f"context was not found for specified context: {ctx_name or ''}")
    ctx = dict(contexts[ctx_name])
    clusters = config.entries("clusters")
    users = config.entries("users")
    if user:
        if user not in users:
            raise KubeconfigError(f'auth info "{user}" does not exist')
        ctx["user"] = user
    if cluster:
        if cluster not in clusters:
            raise KubeconfigError(f'no server found for cluster "{cluster}"')
        ctx["cluster"] = cluster
    cluster_doc = clusters.get(str(ctx.get("cluster")))
    if cluster_doc is None or not cluster_doc.get("server"):
        raise KubeconfigError(f"cluster {ctx.get('cluster')!r} of context {ctx_name!r} has no server in {file}")
    user_doc = users.get(str(ctx.get("user")), {})
    cluster_base = config.bases.get(("clusters", str(ctx.get("cluster"))), file.parent)
    user_base = config.bases.get(("users", str(ctx.get("user"))), file.parent)
    token = user_doc.get("token")
    if not token and user_doc.get("tokenFile"):
        token_file = Path(user_doc["tokenFile"]).expanduser()
        token = (token_file if token_file.is_absolute() else user_base / token_file).read_text().strip()
    fallbacks: list[str] = []
    for ext in cluster_doc.get("extensions") or []:
        if isinstance(ext, dict) and ext.get("name") == SERVERS_EXTENSION:
            listed = (ext.get("extension") or {}).get("servers") or []
            if not isinstance(listed, list) or not all(isinstance(u, str) and u for u in listed):
                raise KubeconfigError(f"extension {SERVERS_EXTENSION} of cluster {ctx.get('cluster')!r} in {file} "
                                      "must hold servers: a list of URLs")
            fallbacks += [u.rstrip("/") for u in listed]
    return ClientConfig(
        fallback_servers=fallbacks,
        server=str(cluster_doc["server"]).rstrip("/"),
        token=token,
        ca_file=_materialise(cluster_doc.get("certificate-authority-data"), cluster_doc.get("certificate-authority"),
                             cluster_base, ".crt"),
        cert_file=_materialise(user_doc.get("client-certificate-data"), user_doc.get("client-certificate"),
                               user_base, ".crt"),
        key_file=_materialise(user_doc.get("client-key-data"), user_doc.get("client-key"), user_base, ".key"),
        insecure_skip_tls_verify=bool(cluster_doc.get("insecure-skip-tls-verify")),
        namespace=ctx.get("namespace") or "default",
        source=str(file),
        user_name=str(ctx.get("user") or ""),
        impersonate_user=str(user_doc.get("as") or ""),
        impersonate_groups=[str(g) for g in user_doc.get("as-groups") or []],
        impersonate_uid=str(user_doc.get("as-uid") or ""),
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
