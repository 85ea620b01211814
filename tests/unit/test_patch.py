"""Unit tests for minik8s.api.patch (merge, JSON and strategic merge patches)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from minik8s.api.patch import (
    MERGE_KEYS,
    create_merge_patch,
    create_three_way_merge_patch,
    json_merge_patch,
    json_patch,
    strategic_merge_patch,
)

# --------------------------------------------------------------------------------------
# RFC 7386 JSON merge patch -- the examples of RFC 7386 appendix A.


@pytest.mark.parametrize(
    ("target", "patch", "result"),
    [
        ({"a": "b"}, {"a": "c"}, {"a": "c"}),
        ({"a": "b"}, {"b": "c"}, {"a": "b", "b": "c"}),
        ({"a": "b"}, {"a": None}, {}),
        ({"a": "b", "b": "c"}, {"a": None}, {"b": "c"}),
        ({"a": ["b"]}, {"a": "c"}, {"a": "c"}),
        ({"a": "c"}, {"a": ["b"]}, {"a": ["b"]}),
        ({"a": {"b": "c"}}, {"a": {"b": "d", "c": None}}, {"a": {"b": "d"}}),
        ({"a": [{"b": "c"}]}, {"a": [1]}, {"a": [1]}),
        (["a", "b"], ["c", "d"], ["c", "d"]),
        ({"a": "b"}, ["c"], ["c"]),
        ({"a": "foo"}, None, None),
        ({"a": "foo"}, "bar", "bar"),
        ({"e": None}, {"a": 1}, {"e": None, "a": 1}),
        ([1, 2], {"a": "b", "c": None}, {"a": "b"}),
        ({}, {"a": {"bb": {"ccc": None}}}, {"a": {"bb": {}}}),
        ({"a": 1}, {}, {"a": 1}),
        ({"a": {"b": 1}}, {"a": {"b": None}}, {"a": {}}),
        (None, {"a": 1}, {"a": 1}),
    ],
)
def test_json_merge_patch_rfc7386(target: Any, patch: Any, result: Any) -> None:
    assert json_merge_patch(target, patch) == result


def test_json_merge_patch_does_not_mutate_or_share() -> None:
    target = {"a": {"b": [1, 2]}, "c": 1}
    patch = {"a": {"d": [3]}, "c": None, "e": {"f": {"g": 1}}}
    target_before, patch_before = copy.deepcopy(target), copy.deepcopy(patch)
    result = json_merge_patch(target, patch)
    assert result == {"a": {"b": [1, 2], "d": [3]}, "e": {"f": {"g": 1}}}
    assert target == target_before and patch == patch_before
    result["a"]["b"].append(9)
    result["a"]["d"].append(9)
    result["e"]["f"]["g"] = 2
    assert target == target_before and patch == patch_before


# --------------------------------------------------------------------------------------
# RFC 6902 JSON patch


def test_json_patch_operations() -> None:
    target = {"metadata": {"labels": {"a": "1"}}, "spec": {"replicas": 1, "list": [1, 2, 3]}}
    result = json_patch(
        target,
        [
            {"op": "replace", "path": "/spec/replicas", "value": 3},
            {"op": "add", "path": "/metadata/labels/b", "value": "2"},
            {"op": "remove", "path": "/metadata/labels/a"},
            {"op": "add", "path": "/spec/list/-", "value": 4},
            {"op": "add", "path": "/spec/list/0", "value": 0},
            {"op": "move", "from": "/spec/list", "path": "/moved"},
            {"op": "copy", "from": "/moved", "path": "/copied"},
            {"op": "test", "path": "/spec/replicas", "value": 3},
            {"op": "add", "path": "/metadata/labels/with~1slash", "value": "x"},
        ],
    )
    assert result == {
        "metadata": {"labels": {"b": "2", "with/slash": "x"}},
        "spec": {"replicas": 3},
        "moved": [0, 1, 2, 3, 4],
        "copied": [0, 1, 2, 3, 4],
    }


def test_json_patch_empty_and_whole_document() -> None:
    assert json_patch({"a": 1}, []) == {"a": 1}
    assert json_patch({"a": 1}, [{"op": "replace", "path": "", "value": {"b": 2}}]) == {"b": 2}


@pytest.mark.parametrize(
    ("operations", "fragment"),
    [
        ([{"op": "remove", "path": "/missing"}], "operation 0"),
        ([{"op": "replace", "path": "/missing", "value": 1}], "operation 0"),
        ([{"op": "add", "path": "/a", "value": 1}, {"op": "test", "path": "/a", "value": 2}], "operation 1"),
        ([{"op": "bogus", "path": "/a"}], "Unknown operation 'bogus'"),
        ([{"path": "/a"}], "'op'"),
        ([{"op": "add", "value": 1}], "'path'"),
        ([{"op": "add", "path": "/a"}], "'value'"),
        ([{"op": "move", "path": "/a"}], "'from'"),
        ([{"op": "copy", "from": "/nope", "path": "/q"}], "path not found"),
        ([{"op": "add", "path": "no-slash", "value": 1}], "must start with /"),
        ([{"op": "add", "path": "/list/9", "value": 1}], "outside of list"),
        ([{"op": "add", "path": "/list/x", "value": 1}], "not a valid sequence index"),
        ([{"op": "add", "path": "/a/b/c", "value": 1}], "operation 0"),
        ([{"op": 5, "path": "/a"}], "must be a string"),
        (["not an object"], "must be an object"),
    ],
)
def test_json_patch_errors(operations: list[Any], fragment: str) -> None:
    target = {"a": 1, "list": [1]}
    before = copy.deepcopy(target)
    with pytest.raises(ValueError) as info:
        json_patch(target, operations)
    assert fragment in str(info.value)
    assert target == before


def test_json_patch_rejects_non_list() -> None:
    with pytest.raises(ValueError, match="must be a list"):
        json_patch({}, {"op": "add", "path": "/a", "value": 1})  # type: ignore[arg-type]


def test_json_patch_is_all_or_nothing_and_does_not_share() -> None:
    target = {"a": {"b": 1}}
    value = {"deep": [1]}
    operations = [{"op": "add", "path": "/c", "value": value}]
    result = json_patch(target, operations)
    result["c"]["deep"].append(2)
    result["a"]["b"] = 5
    assert value == {"deep": [1]}
    assert target == {"a": {"b": 1}}
    with pytest.raises(ValueError):
        json_patch(target, [{"op": "add", "path": "/x", "value": 1}, {"op": "remove", "path": "/nope"}])
    assert target == {"a": {"b": 1}}


# --------------------------------------------------------------------------------------
# Strategic merge patch


def _pod() -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "web", "labels": {"app": "web", "tier": "fe"}},
        "spec": {
            "containers": [
                {
                    "name": "app",
                    "image": "app:1",
                    "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}],
                    "ports": [{"containerPort": 80, "name": "http"}],
                    "volumeMounts": [{"name": "data", "mountPath": "/data"}],
                    "args": ["--a", "--b"],
                },
                {"name": "sidecar", "image": "side:1"},
            ],
            "volumes": [{"name": "data", "emptyDir": {}}],
            "tolerations": [{"key": "k1", "operator": "Exists"}],
        },
    }


def test_smp_behaves_like_merge_patch_for_maps() -> None:
    result = strategic_merge_patch(
        {"a": 1, "b": {"c": 1, "d": 2}, "e": [1, 2]}, {"a": None, "b": {"c": None, "x": 3}, "e": [3]}
    )
    assert result == {"b": {"d": 2, "x": 3}, "e": [3]}


def test_smp_merges_containers_by_name() -> None:
    result = strategic_merge_patch(_pod(), {"spec": {"containers": [{"name": "app", "image": "app:2"}]}})
    containers = result["spec"]["containers"]
    assert [c["name"] for c in containers] == ["app", "sidecar"]
    assert containers[0]["image"] == "app:2"
    assert containers[0]["env"] == _pod()["spec"]["containers"][0]["env"]  # untouched fields kept
    assert containers[1] == {"name": "sidecar", "image": "side:1"}


def test_smp_appends_new_items_in_patch_order() -> None:
    result = strategic_merge_patch(
        _pod(),
        {
            "spec": {
                "containers": [
                    {"name": "z", "image": "z"},
                    {"name": "sidecar", "image": "side:2"},
                    {"name": "y", "image": "y"},
                ]
            }
        },
    )
    assert [c["name"] for c in result["spec"]["containers"]] == ["app", "sidecar", "z", "y"]
    assert result["spec"]["containers"][1]["image"] == "side:2"


def test_smp_nested_keyed_lists() -> None:
    patch = {
        "spec": {
            "containers": [
                {
                    "name": "app",
                    "env": [{"name": "B", "value": "20"}, {"name": "C", "value": "3"}],
                    "volumeMounts": [
                        {"mountPath": "/data", "readOnly": True},
                        {"name": "tmp", "mountPath": "/tmp"},
                    ],
                    "ports": [{"containerPort": 443, "name": "https"}],
                    "args": ["--c"],
                }
            ]
        }
    }
    app = strategic_merge_patch(_pod(), patch)["spec"]["containers"][0]
    assert app["env"] == [
        {"name": "A", "value": "1"},
        {"name": "B", "value": "20"},
        {"name": "C", "value": "3"},
    ]
    assert app["volumeMounts"] == [
        {"name": "data", "mountPath": "/data", "readOnly": True},
        {"name": "tmp", "mountPath": "/tmp"},
    ]
    assert app["ports"] == [{"containerPort": 80, "name": "http"}, {"containerPort": 443, "name": "https"}]
    assert app["args"] == ["--c"]  # args are replaced whole


def test_smp_replaces_unkeyed_lists() -> None:
    result = strategic_merge_patch(_pod(), {"spec": {"tolerations": [{"key": "k2", "operator": "Exists"}]}})
    assert result["spec"]["tolerations"] == [{"key": "k2", "operator": "Exists"}]
    result = strategic_merge_patch({"command": ["a", "b"]}, {"command": ["c"]})
    assert result == {"command": ["c"]}
    result = strategic_merge_patch({"finalizers": ["a", "b"]}, {"finalizers": ["c"]})
    assert result == {"finalizers": ["c"]}


@pytest.mark.parametrize(
    ("field", "key"),
    [
        ("containers", "name"),
        ("initContainers", "name"),
        ("ephemeralContainers", "name"),
        ("env", "name"),
        ("volumes", "name"),
        ("imagePullSecrets", "name"),
        ("volumeMounts", "mountPath"),
        ("volumeDevices", "devicePath"),
        ("conditions", "type"),
        ("hostAliases", "ip"),
    ],
)
def test_smp_merge_key_table(field: str, key: str) -> None:
    assert MERGE_KEYS[field] == key
    target = {field: [{key: "one", "x": 1}, {key: "two", "x": 2}]}
    result = strategic_merge_patch(target, {field: [{key: "two", "x": 20, "y": 1}, {key: "three"}]})
    assert result == {field: [{key: "one", "x": 1}, {key: "two", "x": 20, "y": 1}, {key: "three"}]}


def test_smp_conditions_by_type() -> None:
    status = {
        "status": {
            "phase": "Running",
            "conditions": [{"type": "Ready", "status": "False"}, {"type": "PodScheduled", "status": "True"}],
        }
    }
    result = strategic_merge_patch(status, {"status": {"conditions": [{"type": "Ready", "status": "True"}]}})
    assert result["status"]["conditions"] == [
        {"type": "Ready", "status": "True"},
        {"type": "PodScheduled", "status": "True"},
    ]


def test_smp_service_ports_merge_by_port() -> None:
    service = {
        "spec": {"ports": [{"port": 80, "targetPort": 8080, "name": "http"}, {"port": 443, "name": "https"}]}
    }
    result = strategic_merge_patch(
        service, {"spec": {"ports": [{"port": 80, "targetPort": 9090}, {"port": 8443}]}}
    )
    assert result["spec"]["ports"] == [
        {"port": 80, "targetPort": 9090, "name": "http"},
        {"port": 443, "name": "https"},
        {"port": 8443},
    ]


def test_smp_ports_distinguish_protocols() -> None:
    target = {"ports": [{"containerPort": 53, "protocol": "UDP"}, {"containerPort": 53, "protocol": "TCP"}]}
    result = strategic_merge_patch(
        target, {"ports": [{"containerPort": 53, "protocol": "TCP", "name": "dns-tcp"}]}
    )
    assert result["ports"] == [
        {"containerPort": 53, "protocol": "UDP"},
        {"containerPort": 53, "protocol": "TCP", "name": "dns-tcp"},
    ]
    # A port without protocol means TCP when a protocol is named in the patch ...
    result = strategic_merge_patch(
        {"ports": [{"containerPort": 80}]}, {"ports": [{"containerPort": 80, "protocol": "UDP"}]}
    )
    assert result["ports"] == [{"containerPort": 80}, {"containerPort": 80, "protocol": "UDP"}]
    # ... and a patch item without protocol matches by containerPort alone.
    result = strategic_merge_patch(target, {"ports": [{"containerPort": 53, "name": "dns"}]})
    assert result["ports"][0] == {"containerPort": 53, "protocol": "UDP", "name": "dns"}
    # Deleting with a protocol removes only that one.
    result = strategic_merge_patch(
        target, {"ports": [{"$patch": "delete", "containerPort": 53, "protocol": "UDP"}]}
    )
    assert result["ports"] == [{"containerPort": 53, "protocol": "TCP"}]


def test_smp_delete_directive_in_list() -> None:
    result = strategic_merge_patch(
        _pod(),
        {
            "spec": {
                "containers": [
                    {"name": "sidecar", "$patch": "delete"},
                    {"name": "app", "env": [{"name": "A", "$patch": "delete"}]},
                ]
            }
        },
    )
    assert [c["name"] for c in result["spec"]["containers"]] == ["app"]
    assert result["spec"]["containers"][0]["env"] == [{"name": "B", "value": "2"}]


def test_smp_delete_of_missing_item_is_a_no_op() -> None:
    result = strategic_merge_patch(_pod(), {"spec": {"volumes": [{"name": "nope", "$patch": "delete"}]}})
    assert result["spec"]["volumes"] == _pod()["spec"]["volumes"]
    result = strategic_merge_patch({}, {"volumes": [{"name": "nope", "$patch": "delete"}]})
    assert result == {"volumes": []}


def test_smp_replace_directive_in_list() -> None:
    result = strategic_merge_patch(
        _pod(), {"spec": {"containers": [{"name": "only", "image": "o"}, {"$patch": "replace"}]}}
    )
    assert result["spec"]["containers"] == [{"name": "only", "image": "o"}]
    result = strategic_merge_patch(_pod(), {"spec": {"volumes": [{"$patch": "replace"}]}})
    assert result["spec"]["volumes"] == []
    result = strategic_merge_patch({"args": ["a"]}, {"args": [{"$patch": "replace"}, "b"]})
    assert result == {"args": ["b"]}


def test_smp_replace_directive_in_map() -> None:
    target = {"metadata": {"labels": {"a": "1", "b": "2"}}}
    result = strategic_merge_patch(
        target, {"metadata": {"labels": {"$patch": "replace", "c": "3", "d": None}}}
    )
    assert result == {"metadata": {"labels": {"c": "3"}}}


def test_smp_delete_and_merge_directives_in_map() -> None:
    target = {"spec": {"template": {"x": 1}, "other": 1}}
    assert strategic_merge_patch(target, {"spec": {"template": {"$patch": "delete"}}}) == {
        "spec": {"template": {}, "other": 1}
    }
    assert strategic_merge_patch(target, {"spec": {"$patch": "merge", "y": 2}}) == {
        "spec": {"template": {"x": 1}, "other": 1, "y": 2}
    }
    assert strategic_merge_patch(target, {"$patch": "delete"}) == {}
    result = strategic_merge_patch(
        _pod(), {"spec": {"containers": [{"name": "app", "$patch": "merge", "image": "i"}]}}
    )
    assert result["spec"]["containers"][0]["image"] == "i"
    assert "$patch" not in result["spec"]["containers"][0]


def test_smp_retain_keys() -> None:
    deployment = {"spec": {"strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1}}}}
    result = strategic_merge_patch(
        deployment, {"spec": {"strategy": {"$retainKeys": ["type"], "type": "Recreate"}}}
    )
    assert result == {"spec": {"strategy": {"type": "Recreate"}}}
    volume = {"volumes": [{"name": "v", "emptyDir": {}}]}
    result = strategic_merge_patch(
        volume, {"volumes": [{"name": "v", "$retainKeys": ["name", "hostPath"], "hostPath": {"path": "/x"}}]}
    )
    assert result == {"volumes": [{"name": "v", "hostPath": {"path": "/x"}}]}


def test_smp_set_element_order_is_ignored_and_dropped() -> None:
    result = strategic_merge_patch(
        _pod(),
        {
            "spec": {
                "$setElementOrder/containers": [{"name": "sidecar"}, {"name": "app"}],
                "containers": [{"name": "app", "image": "app:3"}],
            }
        },
    )
    assert [c["name"] for c in result["spec"]["containers"]] == ["app", "sidecar"]
    assert not any(key.startswith("$") for key in result["spec"])


def test_smp_delete_from_primitive_list() -> None:
    target = {"metadata": {"finalizers": ["a", "b", "c"]}}
    result = strategic_merge_patch(target, {"metadata": {"$deleteFromPrimitiveList/finalizers": ["b", "zz"]}})
    assert result == {"metadata": {"finalizers": ["a", "c"]}}
    # No list there: nothing to delete.
    assert strategic_merge_patch({}, {"$deleteFromPrimitiveList/finalizers": ["a"]}) == {}


def test_smp_nulls_and_directives_never_reach_the_result() -> None:
    result = strategic_merge_patch(
        {},
        {
            "spec": {
                "containers": [
                    {
                        "name": "a",
                        "resources": {"limits": None, "requests": {"cpu": "1"}},
                        "env": [{"name": "X", "$patch": "delete"}, {"name": "Y", "value": None}],
                    }
                ],
                "tolerations": [{"key": "k", "value": None}],
            }
        },
    )
    assert result == {
        "spec": {
            "containers": [{"name": "a", "resources": {"requests": {"cpu": "1"}}, "env": [{"name": "Y"}]}],
            "tolerations": [{"key": "k"}],
        }
    }


def test_smp_null_deletes_keyed_list() -> None:
    result = strategic_merge_patch(_pod(), {"spec": {"volumes": None}})
    assert "volumes" not in result["spec"]


def test_smp_type_changes() -> None:
    assert strategic_merge_patch({"a": [1]}, {"a": {"b": 1}}) == {"a": {"b": 1}}
    assert strategic_merge_patch({"a": {"b": 1}}, {"a": "x"}) == {"a": "x"}
    assert strategic_merge_patch({"containers": "weird"}, {"containers": [{"name": "a"}]}) == {
        "containers": [{"name": "a"}]
    }


def test_smp_does_not_mutate_or_share() -> None:
    target = _pod()
    patch = {
        "spec": {
            "containers": [
                {"name": "app", "env": [{"name": "Z", "value": "z"}]},
                {"name": "new", "ports": [{"containerPort": 1}]},
            ],
            "tolerations": [{"key": "t"}],
            "extra": {"deep": [1]},
        }
    }
    target_before, patch_before = copy.deepcopy(target), copy.deepcopy(patch)
    result = strategic_merge_patch(target, patch)
    assert target == target_before and patch == patch_before
    result["spec"]["containers"][0]["env"].append({"name": "Q"})
    assert result["spec"]["containers"][2]["name"] == "new"
    result["spec"]["containers"][2]["ports"][0]["containerPort"] = 2
    result["spec"]["tolerations"][0]["key"] = "changed"
    result["spec"]["extra"]["deep"].append(2)
    result["spec"]["volumes"][0]["emptyDir"]["medium"] = "Memory"
    assert target == target_before and patch == patch_before


@pytest.mark.parametrize(
    ("target", "patch", "fragment"),
    [
        ({}, {"$patch": "bogus"}, "unknown $patch directive 'bogus'"),
        ({}, {"a": {"$patch": 1}}, "a: unknown $patch directive 1"),
        ({}, {"containers": [{"name": "a", "$patch": "bogus"}]}, "containers[0]: unknown $patch directive"),
        ({}, {"containers": [{"image": "x"}]}, "does not contain declared merge key 'name'"),
        ({}, {"containers": [{"image": "x", "$patch": "delete"}]}, "merge key 'name'"),
        ({}, {"containers": ["a"]}, "must be objects with merge key 'name'"),
        ({}, {"ports": [{"containerPort": 1}, {"name": "x"}]}, "declared merge key 'containerPort'"),
        ({}, {"containers": [{"$patch": "replace", "name": "a"}]}, "must have no other fields"),
        ({}, {"args": [{"$patch": "delete", "x": 1}]}, "list that has no merge key"),
        ({}, {"a": {"$retainKeys": "b"}}, "$retainKeys must be a list"),
        ({}, {"a": {"$retainKeys": ["b"], "c": 1}}, "field 'c' is patched but not listed in $retainKeys"),
        ({}, {"$setElementOrder/containers": "x"}, "must be a list"),
        ({}, {"$deleteFromPrimitiveList/finalizers": "x"}, "must be a list"),
        ([], {}, "target must be an object"),
        ({}, [], "must be an object"),
    ],
)
def test_smp_errors(target: Any, patch: Any, fragment: str) -> None:
    with pytest.raises(ValueError) as info:
        strategic_merge_patch(target, patch)
    assert fragment in str(info.value)


def test_smp_error_names_the_path() -> None:
    with pytest.raises(ValueError, match=r"spec\.containers\[0\]\.env\[1\]"):
        strategic_merge_patch(
            _pod(), {"spec": {"containers": [{"name": "app", "env": [{"name": "x"}, {"value": "1"}]}]}}
        )


# --------------------------------------------------------------------------------------
# Computing merge patches


@pytest.mark.parametrize(
    ("original", "modified", "patch"),
    [
        ({}, {}, {}),
        ({"a": 1}, {"a": 1}, {}),
        ({"a": 1}, {"a": 2}, {"a": 2}),
        ({"a": 1}, {}, {"a": None}),
        ({}, {"a": {"b": 1}}, {"a": {"b": 1}}),
        ({"a": {"b": 1, "c": 2}}, {"a": {"b": 1, "c": 3}}, {"a": {"c": 3}}),
        ({"a": {"b": 1}}, {"a": {}}, {"a": {"b": None}}),
        ({"a": {"b": 1}}, {"a": {"b": 1}}, {}),
        ({"a": [1, 2]}, {"a": [1, 2]}, {}),
        ({"a": [1, 2]}, {"a": [2, 1]}, {"a": [2, 1]}),
        ({"a": [{"x": 1}]}, {"a": [{"x": 2}]}, {"a": [{"x": 2}]}),
        ({"a": 1}, {"a": True}, {"a": True}),
        ({"a": True}, {"a": 1}, {"a": 1}),
        ({"a": 1}, {"a": 1.0}, {}),
        ({"a": {"b": 1}}, {"a": "s"}, {"a": "s"}),
        ({"a": "s"}, {"a": {"b": 1}}, {"a": {"b": 1}}),
        ({"a": [1]}, {"a": {"0": 1}}, {"a": {"0": 1}}),
    ],
)
def test_create_merge_patch(
    original: dict[str, Any], modified: dict[str, Any], patch: dict[str, Any]
) -> None:
    assert create_merge_patch(original, modified) == patch
    assert json_merge_patch(original, patch) == modified


def test_create_merge_patch_round_trip_on_a_pod() -> None:
    original = _pod()
    modified = _pod()
    modified["metadata"]["labels"]["tier"] = "be"
    del modified["metadata"]["labels"]["app"]
    modified["spec"]["containers"][1]["image"] = "side:2"
    modified["spec"]["restartPolicy"] = "Never"
    del modified["spec"]["tolerations"]
    patch = create_merge_patch(original, modified)
    assert patch == {
        "metadata": {"labels": {"app": None, "tier": "be"}},
        "spec": {"containers": modified["spec"]["containers"], "restartPolicy": "Never", "tolerations": None},
    }
    assert json_merge_patch(original, patch) == modified
    patch["spec"]["containers"][0]["image"] = "changed"
    assert modified["spec"]["containers"][0]["image"] == "app:1"  # patch does not share with inputs


def test_create_merge_patch_rejects_non_dicts() -> None:
    with pytest.raises(ValueError):
        create_merge_patch([], {})  # type: ignore[arg-type]


def test_three_way_merge_patch() -> None:
    last_applied = {
        "metadata": {"labels": {"app": "web", "old": "x"}},
        "spec": {"replicas": 2, "paused": False},
    }
    new_config = {"metadata": {"labels": {"app": "web"}}, "spec": {"replicas": 3}}
    live = {
        "metadata": {"labels": {"app": "web", "old": "x", "added-by-someone": "y"}, "uid": "123"},
        "spec": {"replicas": 2, "paused": False, "revisionHistoryLimit": 10},
        "status": {"replicas": 2},
    }
    patch = create_three_way_merge_patch(last_applied, new_config, live)
    assert patch == {"metadata": {"labels": {"old": None}}, "spec": {"replicas": 3, "paused": None}}
    result = json_merge_patch(live, patch)
    assert result["metadata"]["labels"] == {"app": "web", "added-by-someone": "y"}
    assert result["spec"] == {"replicas": 3, "revisionHistoryLimit": 10}
    assert result["status"] == {"replicas": 2}


def test_three_way_merge_patch_restores_drifted_fields_and_handles_no_original() -> None:
    config = {"spec": {"replicas": 3, "template": {"image": "a"}}}
    live = {"spec": {"replicas": 5, "template": {"image": "a", "defaulted": True}}}
    assert create_three_way_merge_patch(config, config, live) == {"spec": {"replicas": 3}}
    assert create_three_way_merge_patch(None, config, live) == {"spec": {"replicas": 3}}
    assert (
        create_three_way_merge_patch(config, config, {"spec": {"replicas": 3, "template": {"image": "a"}}})
        == {}
    )


def test_three_way_merge_patch_rejects_non_dicts() -> None:
    with pytest.raises(ValueError):
        create_three_way_merge_patch({}, {}, [])  # type: ignore[arg-type]
