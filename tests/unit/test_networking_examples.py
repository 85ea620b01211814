"""examples/networking/*.yaml and examples/config/*.yaml are valid objects (defaulted and validated as the
apiserver does)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from minik8s.api.registry import default_registry
from minik8s.apiserver.services import ServiceStrategy
from minik8s.apiserver.strategy import default_strategies

EXAMPLES = sorted(path for folder in ("networking", "config")
                  for path in (Path(__file__).resolve().parents[2] / "examples" / folder).glob("*.yaml"))


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_example_objects_are_valid(path: Path) -> None:
    strategies = {**default_strategies(), "Service": ServiceStrategy()}
    registry = default_registry()
    docs = [d for d in yaml.safe_load_all(path.read_text()) if d]
    assert docs
    for obj in docs:
        assert registry.by_kind(obj["apiVersion"], obj["kind"]) is not None, obj["kind"]
        strategy = strategies.get(obj["kind"])
        if strategy is None:
            continue
        strategy.prepare_for_create(obj)
        strategy.default(obj)
        assert strategy.validate(obj, None) == [], f"{path.name}: {obj['kind']} {obj['metadata']['name']}"
