"""The REST client keeps httpcore's per-request ``import sniffio`` from searching sys.path."""

from __future__ import annotations

import sys

import pytest

import minik8s.client.rest  # noqa: F401 - importing it is what is tested


def test_sniffio_is_either_imported_or_remembered_missing() -> None:
    assert "sniffio" in sys.modules
    if sys.modules["sniffio"] is None:  # not installed: the import fails from the cache
        with pytest.raises(ImportError):
            import sniffio  # noqa: F401
