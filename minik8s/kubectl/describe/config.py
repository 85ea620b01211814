"""``kubectl describe`` for ConfigMaps (every value in full) and Secrets (sizes only: a Secret's
values are never printed)."""

from __future__ import annotations

from minik8s.api.base import Obj
from minik8s.api.resourcetypes import ResourceType
from minik8s.kubectl.describe.shared import fetch_events
from minik8s.kubectl.sections import header, meta_of, write_events
from minik8s.kubectl.session import Session


async def describe_config_map(s: Session, rt: ResourceType, cm: Obj) -> str:
    """A ConfigMap as kubectl shows it: every ``data`` value in full, ``binaryData`` as byte counts."""
    from minik8s.api.config import b64decode  # noqa: PLC0415 - its module imports the pydantic models

    w = header(meta_of(cm))
    text = ["", "Data", "===="]
    for key, value in sorted((cm.get("data") or {}).items()):
        text += [f"{key}:", "----", str(value), ""]
    text += ["", "BinaryData", "===="]
    for key, value in sorted((cm.get("binaryData") or {}).items()):
        text.append(f"{key}: {len(b64decode(value))} bytes")
    text.append("")
    w.verbatim("\n".join(text))
    write_events(w, await fetch_events(s, cm, rt))
    return w.text()


async def describe_secret(s: Session, rt: ResourceType, secret: Obj) -> str:
    """A Secret as kubectl shows it: its type and the size of each value, never the values but a
    service account token Secret's ``token`` (printed in full, as kubectl does)."""
    from minik8s.api.config import b64decode  # noqa: PLC0415 - its module imports the pydantic models

    w = header(meta_of(secret))
    w.write(0, "")
    w.write(0, f"Type:\t{secret.get('type') or 'Opaque'}")
    w.write(0, "")
    w.write(0, "Data")
    w.write(0, "====")
    token_secret = secret.get("type") == "kubernetes.io/service-account-token"
    for key, value in sorted((secret.get("data") or {}).items()):
        raw = b64decode(value)
        if token_secret and key == "token":
            w.write(0, f"{key}:\t{raw.decode('utf-8', 'replace')}")
        else:
            w.write(0, f"{key}:\t{len(raw)} bytes")
    return w.text()
