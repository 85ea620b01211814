"""The pure pieces of ``kubectl cp`` and ``kubectl port-forward``: file specs, tar names, port specs."""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

import pytest

from minik8s.kubectl.cp import FileSpec, file_spec, pack, strip_shortcuts, unpack
from minik8s.kubectl.errors import KubectlError
from minik8s.kubectl.port_forward import parse_port_spec, service_target


@pytest.mark.parametrize(("arg", "spec"), [
    ("/tmp/x", FileSpec("/tmp/x")),
    ("box:/tmp/x", FileSpec("/tmp/x", "box")),
    ("ns/box:/tmp/x", FileSpec("/tmp/x", "box", "ns")),
    ("box:", FileSpec("", "box")),
])
def test_file_specs(arg: str, spec: FileSpec) -> None:
    assert file_spec(arg) == spec


@pytest.mark.parametrize("arg", [":/tmp/x", "a/b/c:/x"])
def test_bad_file_specs(arg: str) -> None:
    with pytest.raises(KubectlError, match=r"canonical format: \[\[namespace/\]pod:\]file/path"):
        file_spec(arg)


@pytest.mark.parametrize(("path", "prefix"), [
    ("/tmp/x.txt", "tmp/x.txt"), ("/tmp/../x/", "x"), ("../../etc", "etc"), ("./a", "a"), ("..", ""),
    ("/", ""),
])
def test_remote_paths_as_tar_names_them(path: str, prefix: str) -> None:
    assert strip_shortcuts(path) == prefix


def test_a_directory_packs_under_the_destination_name_and_unpacks_back(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    (tree / "sub").mkdir(parents=True)
    (tree / "empty").mkdir()
    (tree / "a.txt").write_text("a\n")
    (tree / "sub" / "b.txt").write_text("b\n")
    data = pack(str(tree), "copy")
    names = sorted(tarfile.open(fileobj=io.BytesIO(data)).getnames())
    assert names == ["copy/a.txt", "copy/empty", "copy/sub/b.txt"]
    # As the remote tar gives it back: entries named by the remote path without its leading "/".
    remote = io.BytesIO()
    with tarfile.open(fileobj=remote, mode="w") as tar:
        for name, content in (("tmp/copy/a.txt", b"a\n"), ("tmp/copy/sub/b.txt", b"b\n"),
                              ("tmp/copy/../../escape.txt", b"x")):
            info = tarfile.TarInfo(name)
            info.size = len(content)
            tar.addfile(info, io.BytesIO(content))
    back = tmp_path / "back"
    unpack(remote.getvalue(), "tmp/copy", str(back), "ns", "pod", "/tmp/copy")
    assert (back / "a.txt").read_text() == "a\n" and (back / "sub" / "b.txt").read_text() == "b\n"
    assert not (tmp_path / "escape.txt").exists()
    with pytest.raises(KubectlError, match="tar contents corrupted"):
        unpack(remote.getvalue(), "elsewhere", str(back), "ns", "pod", "/elsewhere")


@pytest.mark.parametrize(("spec", "pair"), [("8080", ("8080", "8080")), ("8080:80", ("8080", "80")),
                                            (":80", ("", "80"))])
def test_port_specs(spec: str, pair: tuple[str, str]) -> None:
    assert parse_port_spec(spec) == pair


def test_a_service_port_leads_to_its_target_port() -> None:
    service = {"metadata": {"name": "web"}, "spec": {"ports": [
        {"port": 80, "targetPort": 8080}, {"port": 81, "targetPort": "metrics"}, {"port": 82}]}}
    pod = {"spec": {"containers": [{"name": "c", "ports": [{"name": "metrics", "containerPort": 9090}]}]}}
    assert [service_target(service, pod, p) for p in (80, 81, 82)] == [8080, 9090, 82]
    with pytest.raises(KubectlError, match="does not have a service port 83"):
        service_target(service, pod, 83)
