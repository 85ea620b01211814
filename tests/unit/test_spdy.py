"""SPDY/3.1 framing of the apiserver's port-forward tunnel (kubectl >= 1.31's ``SPDY/3.1+portforward.k8s.io``)."""

from __future__ import annotations

import struct
import zlib

import pytest

from minik8s.apiserver import spdy


def test_dictionary_is_the_spdy3_one() -> None:
    # 1423 bytes: length-prefixed header names, then the status/date/type tail.
    assert len(spdy.DICTIONARY) == 1423
    assert spdy.DICTIONARY.startswith(b"\x00\x00\x00\x07options\x00\x00\x00\x04head")
    assert spdy.DICTIONARY.endswith(b"charset=iso-8859-1,utf-,*,enq=0.")
    assert zlib.adler32(spdy.DICTIONARY) == 0xE3C6A7C2  # the DICTID kubectl's header blocks name


def test_frames_and_header_blocks_round_trip() -> None:
    client, server = spdy.Framer(), spdy.Framer()
    # As a client's SYN_STREAM for a port-forward data stream: id, associated id, priority, slot, headers.
    headers = {"streamType": "data", "port": "8080", "requestID": "0"}
    syn = spdy.Framer.control(spdy.SYN_STREAM, 0, struct.pack(">IIBB", 3, 0, 0, 0) + client.header_block(headers))
    data = spdy.Framer.data(3, b"GET / HTTP/1.1\r\n\r\n") + spdy.Framer.data(3, b"", fin=True)
    wire = syn + data
    frames = server.feed(wire[:5]) + server.feed(wire[5:20]) + server.feed(wire[20:])  # any split
    assert [(c, k, f) for c, k, f, _ in frames] == [(True, spdy.SYN_STREAM, 0), (False, 3, 0),
                                                    (False, 3, spdy.FLAG_FIN)]
    assert server.headers(frames[0][3][10:]) == {"streamtype": "data", "port": "8080", "requestid": "0"}
    assert frames[1][3] == b"GET / HTTP/1.1\r\n\r\n" and frames[2][3] == b""
    # The second block of a connection uses the same zlib stream.
    block = client.header_block({"streamType": "error", "port": "8080", "requestID": "0"})
    assert server.headers(block)["streamtype"] == "error"


def test_other_versions_are_refused() -> None:
    frame = struct.pack(">HHI", 0x8000 | 2, spdy.PING, 4) + b"\x00\x00\x00\x01"
    with pytest.raises(spdy.ProtocolError):
        spdy.Framer().feed(frame)
