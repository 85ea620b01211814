#!/usr/bin/env python3
"""Write Kubernetes' documentation of the fields minik8s' models have (``kubectl explain`` shows it),
and the fields Kubernetes' OpenAPI marks required (every response carries them).

The text comes from the ``kubernetes`` Python client's models (generated from Kubernetes' OpenAPI
document): for each OpenAPI definition minik8s serves with a Kubernetes name
(``io.k8s.api.core.v1.PodSpec`` → ``V1PodSpec``), the type's description and those of the fields
the minik8s model has (first file), and the JSON names of the fields Kubernetes requires (second
file: definition → sorted names; the client's models require what the OpenAPI ``required`` lists
name).  Run it again when models or kinds are added:

    .venv/bin/python scripts/k8s-field-docs.py minik8s/api/k8s-docs.json minik8s/api/k8s-required.json
"""

from __future__ import annotations

import datetime
import json
import sys

import kubernetes.client.models as k8s

from minik8s.api.registry import METRICS_TYPES, default_registry
from minik8s.api.schema import Schemas

#: minik8s' one ``Condition`` model stands for every kind's condition type (PodCondition,
#: NodeCondition, DeploymentCondition, ...): only what all of them require is required of it.
SHARED_REQUIRED = {"io.k8s.apimachinery.pkg.apis.meta.v1.Condition": ["status", "type"]}


def client_class(definition: str) -> type | None:
    """The kubernetes client's model of an OpenAPI definition name, if it has one."""
    if not definition.startswith("io.k8s."):
        return None
    *_, group, version, kind = definition.split(".")
    name = f"{version[:1].upper()}{version[1:]}{kind}"
    # a kind two groups name alike is the client's <Group><Version><Kind> (DiscoveryV1EndpointPort)
    if group == "core" or hasattr(k8s, name):
        return getattr(k8s, name, None)
    return getattr(k8s, f"{group[:1].upper()}{group[1:]}{name}", None)


def collect() -> tuple[dict[str, dict[str, str]], dict[str, list[str]]]:
    """(definition → {field: Kubernetes' text}, definition → required JSON field names)."""
    from minik8s.apiserver.versions import SERVED_VERSIONS

    types = default_registry().types + METRICS_TYPES + [sv.rt for sv in SERVED_VERSIONS]
    docs: dict[str, dict[str, str]] = {}
    required: dict[str, list[str]] = {}
    for name, schema in sorted(Schemas(types).definitions.items()):
        cls = client_class(name)
        if cls is None or not hasattr(cls, "model_fields"):
            continue
        entry: dict[str, str] = {}
        type_doc = (cls.__doc__ or "").strip().split("\n\n")[0]
        if type_doc and not type_doc.startswith(cls.__name__):
            entry[""] = " ".join(type_doc.split())
        attribute_map = getattr(cls, "attribute_map", None) or {}
        # A time's zero value is null on the wire (metav1.Time), so a required time cannot be filled.
        names = SHARED_REQUIRED.get(name) or sorted(
            attribute_map.get(attr, info.alias or attr) for attr, info in cls.model_fields.items()
            if info.is_required() and info.annotation is not datetime.datetime)
        if names:
            required[name] = names
        by_json = {info.alias or attr: info for attr, info in cls.model_fields.items()}
        for attr, key in attribute_map.items():
            by_json.setdefault(key, cls.model_fields.get(attr))
        for field in schema.get("properties") or {}:
            info = by_json.get(field)
            if info is not None and info.description:
                entry[field] = " ".join(info.description.split())
        if entry:
            docs[name] = entry
    return docs, required


def main(argv: list[str]) -> int:
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    docs, required = collect()
    with open(argv[1], "w") as f:
        json.dump(docs, f, indent=0, sort_keys=True)
        f.write("\n")
    with open(argv[2], "w") as f:
        json.dump(required, f, indent=0, sort_keys=True)
        f.write("\n")
    print(f"{argv[1]}: {len(docs)} types, {sum(len(v) for v in docs.values())} descriptions")
    print(f"{argv[2]}: {len(required)} types, {sum(len(v) for v in required.values())} required fields")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
