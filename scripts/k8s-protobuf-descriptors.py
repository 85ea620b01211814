#!/usr/bin/env python3
"""Write the protobuf descriptors of Kubernetes' API types that the apiserver decodes, and of
the OpenAPI v2 document it encodes.

kubectl's generators (``kubectl create deployment|service|namespace|ingress|configmap|secret|job``,
``kubectl autoscale``) send request bodies in Kubernetes' protobuf encoding, and client-go never
falls back to JSON for them.  To decode those bodies the apiserver needs the message definitions
(``k8s.io/api/*/generated.proto``).  Every Go binary built with them carries them as gzipped
``FileDescriptorProto``s; this script reads them from a kubectl binary and writes a
``FileDescriptorSet`` with the files of the groups minik8s serves and what they import.  client-go
also reads ``/openapi/v2`` only in protobuf (gnostic's ``openapi.v2.Document``, kept raw by
protobuf-go in the same binary), so that file comes along too:

    .venv/bin/python scripts/k8s-protobuf-descriptors.py /usr/bin/kubectl \\
        minik8s/apiserver/k8s-api.binpb

Run it again (with a newer kubectl) to pick up fields added to Kubernetes' types.
"""

from __future__ import annotations

import re
import sys
import zlib

from google.protobuf import any_pb2, descriptor_pb2

#: The files whose types the apiserver decodes (their imports come along): every stable version of
#: Kubernetes' API groups (``k8s.io/api/<group>/v1/``, ``.../v2/``) — a client may send any of their
#: kinds as a body (Eviction, Scale, TokenRequest, the reviews, ...) — and runtime.Unknown, the envelope.
WANTED = re.compile(r"k8s\.io/api/[a-z0-9]+/v[0-9]+/generated\.proto$|k8s\.io/apimachinery/pkg/runtime/generated\.proto$")


def embedded_descriptors(binary: bytes) -> dict[str, descriptor_pb2.FileDescriptorProto]:
    """Every ``k8s.io/...`` FileDescriptorProto gzipped inside ``binary``, by file name."""
    found: dict[str, descriptor_pb2.FileDescriptorProto] = {}
    for match in re.finditer(rb"\x1f\x8b\x08\x00\x00\x00\x00\x00", binary):
        try:
            raw = zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(binary[match.start():match.start() + (4 << 20)])
            fd = descriptor_pb2.FileDescriptorProto.FromString(raw)
        except Exception:  # noqa: BLE001 - not a descriptor: keep looking
            continue
        if fd.name.startswith("k8s.io/"):
            found[fd.name] = fd
    return found


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return value, pos


def raw_descriptor(binary: bytes, name: str) -> descriptor_pb2.FileDescriptorProto | None:
    """A FileDescriptorProto stored uncompressed (protobuf-go's raw descriptors): it starts with its
    name (field 1) and ends where the bytes stop being FileDescriptorProto fields (1-14)."""
    start = binary.find(b"\x0a" + bytes([len(name)]) + name.encode())
    if start < 0:
        return None
    pos = start
    while pos < len(binary):
        try:
            key, after = _varint(binary, pos)
            number, wire = key >> 3, key & 7
            if not 1 <= number <= 14 or wire not in (0, 2):
                break
            value, after = _varint(binary, after)
        except IndexError:
            break
        pos = after + (value if wire == 2 else 0)
    try:
        return descriptor_pb2.FileDescriptorProto.FromString(binary[start:pos])
    except Exception:  # noqa: BLE001
        return None


def main(argv: list[str]) -> int:
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    with open(argv[1], "rb") as f:
        binary = f.read()
    found = embedded_descriptors(binary)
    todo = [name for name in found if WANTED.match(name)]
    if not todo:
        print(f"{argv[1]}: no Kubernetes protobuf descriptors found", file=sys.stderr)
        return 1
    chosen: dict[str, descriptor_pb2.FileDescriptorProto] = {}
    while todo:
        name = todo.pop()
        if name in chosen:
            continue
        fd = found[name]
        chosen[name] = fd
        todo += [dep for dep in fd.dependency if dep in found]
    out = descriptor_pb2.FileDescriptorSet()
    done: set[str] = set()

    def add(name: str) -> None:  # dependencies first, as a DescriptorPool wants them
        if name in done:
            return
        done.add(name)
        for dep in chosen[name].dependency:
            if dep in chosen:
                add(dep)
        fd = descriptor_pb2.FileDescriptorProto()
        fd.CopyFrom(chosen[name])
        fd.ClearField("source_code_info")
        fd.ClearField("public_dependency")
        fd.ClearField("weak_dependency")
        del fd.dependency[:]  # gogo.proto's options are not needed to decode
        fd.dependency.extend(dep for dep in chosen[name].dependency if dep in chosen)
        out.file.append(fd)

    for name in sorted(chosen):
        add(name)
    openapi_v2 = raw_descriptor(binary, "openapiv2/OpenAPIv2.proto")
    if openapi_v2 is None:
        print(f"{argv[1]}: no openapiv2/OpenAPIv2.proto descriptor found", file=sys.stderr)
        return 1
    any_proto = descriptor_pb2.FileDescriptorProto()
    any_pb2.DESCRIPTOR.CopyToProto(any_proto)
    openapi_v2.ClearField("source_code_info")
    out.file.extend([any_proto, openapi_v2])
    with open(argv[2], "wb") as f:
        f.write(out.SerializeToString())
    print(f"{argv[2]}: {len(out.file)} files, {sum(len(f.message_type) for f in out.file)} messages")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
