"""The object builders of ``kubectl create secret tls|docker-registry``, ``create ingress`` and
``create token``, and ``--append-hash``'s name suffix, as kubectl 1.32 builds them (the verbs are in
:mod:`minik8s.kubectl.create`).

Nothing here talks to a server: each builder takes the flags' values and returns the object (Go
field order, see :mod:`minik8s.kubectl.creating`) or raises KubectlError in kubectl's words.  The
certificate checks of ``secret tls`` import ``cryptography`` only when they run.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

from minik8s.api.base import Obj
from minik8s.api.config import b64encode
from minik8s.kubectl.errors import KubectlError

# ------------------------------------------------------------------ --append-hash


def _go_marshal(value: Any) -> bytes:
    """Go's ``json.Marshal`` of maps (keys sorted, HTML characters escaped, no newline)."""
    text = json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    for char, escape in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"),
                         ("\u2028", "\\u2028"), ("\u2029", "\\u2029")):
        text = text.replace(char, escape)
    return text.encode()


def _suffix(encoded: bytes) -> str:
    """The first 10 hex digits of the SHA-256 of ``encoded``, with ``0 1 3 a e`` written ``g h k m t``
    (Kubernetes' ``hash.encodeHash``: no vowels, nothing that reads as a word or a number)."""
    return hashlib.sha256(encoded).hexdigest()[:10].translate(str.maketrans("013ae", "ghkmt"))


def config_map_hash(obj: Obj) -> str:
    """``--append-hash``'s suffix of a ConfigMap: over ``{kind, name, data, binaryData (when any)}``."""
    content: Obj = {"kind": "ConfigMap", "name": obj["metadata"]["name"], "data": obj.get("data") or {}}
    if obj.get("binaryData"):
        content["binaryData"] = obj["binaryData"]
    return _suffix(_go_marshal(content))


def secret_hash(obj: Obj) -> str:
    """``--append-hash``'s suffix of a Secret: over ``{kind, type ('' when unset), name, data}`` (the
    data base64, as ``[]byte`` marshals)."""
    content = {"kind": "Secret", "type": obj.get("type", ""), "name": obj["metadata"]["name"],
               "data": obj.get("data") or {}}
    return _suffix(_go_marshal(content))


def append_hash(obj: Obj) -> None:
    """Rename ``obj`` (a ConfigMap or Secret) ``NAME-<hash>`` as ``--append-hash`` does."""
    suffix = config_map_hash(obj) if obj["kind"] == "ConfigMap" else secret_hash(obj)
    obj["metadata"]["name"] = f'{obj["metadata"]["name"]}-{suffix}'


# ------------------------------------------------------------------ secret tls
_PEM = re.compile(rb"-----BEGIN ([^-\r\n]*)-----\r?\n(.*?)-----END \1-----", re.S)


def _pem_blocks(data: bytes) -> list[tuple[str, bytes]]:
    """Every PEM block of ``data``: ``(type, whole block)``."""
    return [(m.group(1).decode("latin-1"), m.group(0)) for m in _PEM.finditer(data)]


def check_tls_pair(cert: bytes, key: bytes) -> None:
    """Refuse a certificate/key pair Go's ``tls.X509KeyPair`` refuses, with its message: no PEM data,
    the inputs switched, a key that does not parse, a key that is not the certificate's."""
    blocks = _pem_blocks(cert)
    certs = [block for kind, block in blocks if kind == "CERTIFICATE"]
    if not certs:
        if not blocks:
            raise KubectlError("tls: failed to find any PEM data in certificate input")
        if any(kind.endswith("PRIVATE KEY") for kind, _ in blocks):
            raise KubectlError("tls: failed to find certificate PEM data in certificate input, but did find a "
                               "private key; PEM inputs may have been switched")
        raise KubectlError('tls: failed to find "CERTIFICATE" PEM block in certificate input after skipping '
                           f'PEM blocks of the following types: [{" ".join(kind for kind, _ in blocks)}]')
    key_blocks = _pem_blocks(key)
    keys = [block for kind, block in key_blocks if kind == "PRIVATE KEY" or kind.endswith(" PRIVATE KEY")]
    if not keys:
        if not key_blocks:
            raise KubectlError("tls: failed to find any PEM data in key input")
        if any(kind == "CERTIFICATE" for kind, _ in key_blocks):
            raise KubectlError("tls: found a certificate rather than a key in the PEM for the private key")
        raise KubectlError('tls: failed to find PEM block with type ending in "PRIVATE KEY" in key input after '
                           f'skipping PEM blocks of the following types: [{" ".join(k for k, _ in key_blocks)}]')
    from cryptography import x509  # noqa: PLC0415 - only secret tls needs it
    from cryptography.hazmat.primitives import serialization  # noqa: PLC0415

    try:
        public = x509.load_pem_x509_certificate(certs[0]).public_key()
    except ValueError as exc:
        raise KubectlError(f"x509: malformed certificate: {exc}") from None
    try:
        private = serialization.load_pem_private_key(keys[0], password=None)
    except (ValueError, TypeError):
        raise KubectlError("tls: failed to parse private key") from None
    fmt = serialization.PublicFormat.SubjectPublicKeyInfo
    if type(public) is not type(private.public_key()):
        raise KubectlError("tls: private key type does not match public key type")
    if public.public_bytes(serialization.Encoding.DER, fmt) != \
            private.public_key().public_bytes(serialization.Encoding.DER, fmt):
        raise KubectlError("tls: private key does not match public key")


def tls_secret(name: str, cert: bytes, key: bytes) -> Obj:
    """``create secret tls``: type ``kubernetes.io/tls``, ``tls.crt`` and ``tls.key`` (the files as
    given, after :func:`check_tls_pair`)."""
    check_tls_pair(cert, key)
    return {"kind": "Secret", "apiVersion": "v1", "metadata": {"name": name, "creationTimestamp": None},
            "data": {"tls.crt": b64encode(cert), "tls.key": b64encode(key)}, "type": "kubernetes.io/tls"}


# ------------------------------------------------------------------ secret docker-registry
DOCKER_SERVER = "https://index.docker.io/v1/"


def docker_config_json(server: str, username: str, password: str, email: str) -> bytes:
    """The ``.dockerconfigjson`` kubectl writes: ``{"auths": {SERVER: {username, password, email (when
    given), auth: base64("USER:PASSWORD")}}}``, compact as Go marshals it."""
    entry = {"username": username, "password": password, "email": email,
             "auth": b64encode(f"{username}:{password}".encode())}
    entry = {k: v for k, v in entry.items() if v}  # omitempty
    text = json.dumps({"auths": {server: entry}}, ensure_ascii=False, separators=(",", ":"))
    for char, escape in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026")):
        text = text.replace(char, escape)
    return text.encode()


# ------------------------------------------------------------------ ingress
#: ``host/path=service:port[,tls[=secret]]`` (kubectl checks a rule's beginning only).
RULE = re.compile(r"[\w*\-.]*/.*=[\w\-]+:[\w\-]+")
RULE_FORMAT = "should be in format host/path=svcname:svcport[,tls[=secret]]"


def _backend(service: str) -> Obj:
    """``NAME:PORT`` as an IngressBackend: a port that is a 32-bit integer is a number, else a name."""
    name, _, port = service.partition(":")
    port = port.split(":")[0]
    ref: Obj = {"name": name}
    if re.fullmatch(r"[+-]?\d+", port) and -(1 << 31) <= int(port) < (1 << 31):
        ref["port"] = {"number": int(port)}
    else:
        ref["port"] = {"name": port}
    return {"service": ref}


def _ingress_path(text: str) -> Obj:
    """``path=service:port`` (after the host's ``/``): pathType ``Prefix`` for a trailing ``*``
    (dropped), else ``Exact``."""
    path_part, _, service = text.partition("=")
    service = service.split("=")[0]
    if ":" not in service:
        raise KubectlError(f"rule path {text} {RULE_FORMAT}")
    path = "/" + path_part
    path_type = "Exact"
    if path.endswith("*"):
        path, path_type = path[:-1], "Prefix"
    return {"path": path, "pathType": path_type, "backend": _backend(service)}


def ingress(name: str, rules: list[str], class_name: str, default_backend: str, annotations: list[str]) -> Obj:
    """``kubectl create ingress``: one IngressRule per host (a host's later paths join its rule), a
    TLS entry for the first ``,tls[=secret]`` rule of each non-empty host, annotations ``key=[value]``.

    KubectlError: neither rules nor a default backend, a rule not in kubectl's format, an annotation
    without ``=``, a default backend not ``service:port``."""
    if not default_backend and not rules:
        raise KubectlError("not enough information provided: every ingress has to either specify a "
                           "default-backend (which catches all traffic) or a list of rules (which catch "
                           "specific paths)")
    for rule in rules:
        if not RULE.match(rule):
            raise KubectlError(f"rule {rule} is invalid and {RULE_FORMAT}")
    notes: dict[str, str] = {}
    for note in annotations:
        key, eq, value = note.partition("=")
        if not eq:
            raise KubectlError(f"annotation {note} is invalid and should be in format key=[value]")
        notes[key] = value
    if default_backend and len(default_backend.split(":")) != 2:
        raise KubectlError("default-backend should be in format servicename:serviceport")
    spec: Obj = {}
    if class_name:
        spec["ingressClassName"] = class_name
    if default_backend:
        spec["defaultBackend"] = _backend(default_backend)
    tls: list[Obj] = []
    tls_hosts: set[str] = set()
    for rule in rules:
        parts = rule.split(",")
        host = rule.split("/", 1)[0]
        if len(parts) != 2 or not host or host in tls_hosts:
            continue
        tls_hosts.add(host)
        secret = parts[1].split("=")
        entry: Obj = {"hosts": [host]}
        if len(secret) > 1 and secret[1]:
            entry["secretName"] = secret[1]
        tls.append(entry)
    if tls:
        spec["tls"] = tls
    ingress_rules: list[Obj] = []
    by_host: dict[str, Obj] = {}
    for rule in rules:
        host, _, rest = rule.split(",")[0].partition("/")
        path = _ingress_path(rest)
        if host in by_host:
            by_host[host]["http"]["paths"].append(path)
            continue
        entry = {"host": host} if host else {}
        entry["http"] = {"paths": [path]}
        by_host[host] = entry
        ingress_rules.append(entry)
    if ingress_rules:
        spec["rules"] = ingress_rules
    meta: Obj = {"name": name, "creationTimestamp": None}
    if notes:
        meta["annotations"] = notes
    return {"kind": "Ingress", "apiVersion": "networking.k8s.io/v1", "metadata": meta, "spec": spec,
            "status": {"loadBalancer": {}}}


# ------------------------------------------------------------------ token
#: The kinds ``create token --bound-object-kind`` binds a token to, with their API version.
BOUND_KINDS = {"Node": "v1", "Pod": "v1", "Secret": "v1"}


def token_request(name: str, audiences: list[str], seconds: int, bound_kind: str, bound_name: str,
                  bound_uid: str) -> Obj:
    """The TokenRequest ``create token`` posts to ``serviceaccounts/NAME/token`` (``seconds`` 0: the
    server's default lifetime); KubectlError in kubectl's words for a bad audience or bound object."""
    for audience in audiences:
        if not audience:
            raise KubectlError("--audience must not be an empty string")
    if not bound_kind:
        if bound_name:
            raise KubectlError("--bound-object-name can only be set if --bound-object-kind is provided")
        if bound_uid:
            raise KubectlError("--bound-object-uid can only be set if --bound-object-kind is provided")
    else:
        if bound_kind not in BOUND_KINDS:
            raise KubectlError(f"supported --bound-object-kind values are {', '.join(sorted(BOUND_KINDS))}")
        if not bound_name:
            raise KubectlError("--bound-object-name is required if --bound-object-kind is provided")
    spec: Obj = {"audiences": list(audiences)} if audiences else {}
    if seconds:
        spec["expirationSeconds"] = seconds
    if bound_kind:
        ref = {"kind": bound_kind, "apiVersion": BOUND_KINDS[bound_kind], "name": bound_name}
        if bound_uid:
            ref["uid"] = bound_uid
        spec["boundObjectRef"] = ref
    return {"kind": "TokenRequest", "apiVersion": "authentication.k8s.io/v1",
            "metadata": {"name": name, "creationTimestamp": None}, "spec": spec, "status": {}}
