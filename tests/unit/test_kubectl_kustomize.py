"""minik8s' kustomize (:mod:`minik8s.kubectl.kustomize`) without a cluster: the generators' content
hashes (the names kubectl 1.32 printed for the same data), image rules, and the errors of bad
kustomizations.  The whole builds are compared with kubectl 1.32 and 1.37 in
``tests/integration/test_kubectl_kustomize_parity.py``."""

from __future__ import annotations

from pathlib import Path

import pytest

from minik8s.kubectl import kustomize
from minik8s.kubectl.kustomize import KustomizeError, build, content_hash, render


@pytest.mark.parametrize(("obj", "suffix"), [
    ({"kind": "ConfigMap", "metadata": {"name": "x"}, "data": {"a": "b"}}, "4h2mbtbbt6"),
    ({"kind": "ConfigMap", "metadata": {"name": "app-config"}, "data": {"A": "1", "FOO": "bar"}}, "h5b65ck698"),
    ({"kind": "Secret", "metadata": {"name": "creds"}, "type": "Opaque", "data": {"password": "czNjcmV0"}},
     "bf5fk5d75b"),
])
def test_content_hash_is_kubectls(obj: dict[str, object], suffix: str) -> None:
    """The suffixes kubectl 1.32's ``kubectl kustomize`` gave the same generated objects."""
    assert content_hash(obj) == suffix


@pytest.mark.parametrize(("image", "rule", "want"), [
    ("nginx:1.25", {"name": "nginx", "newTag": "1.26"}, "nginx:1.26"),
    ("nginx", {"name": "nginx", "newName": "reg/nginx"}, "reg/nginx"),
    ("nginx:1.25", {"name": "nginx", "newName": "reg/nginx"}, "reg/nginx:1.25"),
    ("nginx:1.25", {"name": "nginx", "digest": "sha256:ab"}, "nginx@sha256:ab"),
    ("reg:5000/a/b:1", {"name": "reg:5000/a/b", "newTag": "2"}, "reg:5000/a/b:2"),
    ("other:1", {"name": "nginx", "newTag": "2"}, "other:1"),
])
def test_image_rules(image: str, rule: dict[str, str], want: str) -> None:
    assert kustomize._new_image(image, [rule]) == want


def _write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


@pytest.mark.parametrize(("text", "message"), [
    ("resources: []\nfoo: 1\n", 'invalid Kustomization: json: unknown field "foo"'),
    ("configMapGenerator:\n- name: x\n  bogus: 1\n", 'invalid Kustomization: json: unknown field "bogus"'),
    ("vars: []\n", "the kustomization field 'vars' is not supported by minik8s' kubectl"),
    ("patches:\n- path: p.yaml\n  options:\n    allowNameChange: true\n",
     "the kustomization field 'patches.options' is not supported by minik8s' kubectl"),
    ("namePrefix: [a]\n", "invalid Kustomization: json: cannot unmarshal array into Go struct field "
                          "Kustomization.namePrefix of type string"),
])
def test_bad_kustomizations_fail_with_one_line(tmp_path: Path, text: str, message: str) -> None:
    _write(tmp_path, {"kustomization.yaml": text})
    with pytest.raises(KustomizeError) as caught:
        build(str(tmp_path))
    assert caught.value.message == message


def test_missing_kustomization_file(tmp_path: Path) -> None:
    with pytest.raises(KustomizeError, match="unable to find one of 'kustomization.yaml'"):
        build(str(tmp_path))


def test_generated_names_follow_into_pod_templates(tmp_path: Path) -> None:
    _write(tmp_path, {
        "kustomization.yaml": "resources:\n- pod.yaml\nnamePrefix: p-\nconfigMapGenerator:\n- name: x\n"
                              "  literals:\n  - a=b\n",
        "pod.yaml": "apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\nspec:\n  containers:\n  - name: c\n"
                    "    image: busybox\n    envFrom:\n    - configMapRef:\n        name: x\n",
    })
    objects = build(str(tmp_path))
    assert [o["metadata"]["name"] for o in objects] == ["p-x-4h2mbtbbt6", "p-web"]
    assert objects[1]["spec"]["containers"][0]["envFrom"][0]["configMapRef"]["name"] == "p-x-4h2mbtbbt6"
    assert render(objects).count("---\n") == 1
