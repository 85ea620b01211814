"""ControllerRevision data, hashes, names and order (``minik8s.api.revisions``, ``minik8s.controllers.history``)."""

from __future__ import annotations

import json

from minik8s.api.revisions import revision_data, revision_template
from minik8s.controllers.history import (
    equal_data,
    fnv32,
    hash_revision,
    history_limit,
    next_revision,
    revision_name,
    sort_revisions,
)

TEMPLATE = {"spec": {"containers": [{"name": "main", "image": "busybox"}]}, "metadata": {"labels": {"app": "x"}}}


def test_data_is_the_template_patch_as_go_writes_it() -> None:
    data = revision_data({"spec": {"template": TEMPLATE, "replicas": 3}})
    assert json.dumps(data, separators=(",", ":")) == (
        '{"spec":{"template":{"$patch":"replace","metadata":{"creationTimestamp":null,"labels":{"app":"x"}},'
        '"spec":{"containers":[{"image":"busybox","name":"main","resources":{}}]}}}}')
    restored = revision_template({"data": data})
    assert "$patch" not in restored and restored["spec"]["containers"][0]["image"] == "busybox"
    assert equal_data(data, json.loads(json.dumps(data, sort_keys=False)))
    assert not equal_data(data, revision_data({"spec": {"template": {**TEMPLATE, "spec": {"containers": []}}}}))


def test_hash_is_fnv1_of_the_data_and_the_collision_count() -> None:
    assert fnv32(b"") == 0x811C9DC5 and fnv32(b"a") == 0x050C5D7E
    data = revision_data({"spec": {"template": TEMPLATE}})
    first = hash_revision(data, 0)
    assert first == hash_revision(json.loads(json.dumps(data)), 0) != hash_revision(data, 1)
    assert all(c in "bcdfghjklmnpqrstvwxz2456789" for c in first)
    assert revision_name("x" * 300, first) == "x" * 223 + "-" + first


def test_order_next_number_and_limit() -> None:
    revs = [{"metadata": {"name": n, "creationTimestamp": t}, "revision": r}
            for n, t, r in (("b", "2026-01-02T00:00:00Z", 2), ("a", "2026-01-01T00:00:00Z", 2), ("c", "", 1))]
    assert [r["metadata"]["name"] for r in sort_revisions(revs)] == ["c", "a", "b"]
    assert next_revision(revs) == 3 and next_revision([]) == 1
    assert history_limit({"spec": {}}) == 10 and history_limit({"spec": {"revisionHistoryLimit": 0}}) == 0
