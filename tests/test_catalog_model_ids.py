"""`loader.model_ids` names exactly the models `loader.models` parses, in its order, and warns as it does."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest
from test_cli_catalog import QWEN_CONFIG

from costmodel.catalog import loader
from costmodel.cli import main


def test_model_ids_are_the_models_keys_bundled_and_imported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("COSTMODEL_HOME", str(tmp_path / "home"))
    assert loader.model_ids() == tuple(loader.models())  # bundled only
    config = tmp_path / "config.json"
    config.write_text(json.dumps(QWEN_CONFIG))
    assert main(["models", "import", str(config), "--id", "my-qwen", "--json", "--date", "2026-12-01"]) == 0
    capsys.readouterr()
    (tmp_path / "home" / "models" / "broken.yaml").write_text("id: broken\nname: [unclosed\n")
    with warnings.catch_warnings(record=True) as from_ids:
        warnings.simplefilter("always")
        ids = loader.model_ids()
    with warnings.catch_warnings(record=True) as from_models:
        warnings.simplefilter("always")
        table = loader.models()
    assert ids == tuple(table) and ids[-1] == "my-qwen" and "broken" not in ids
    assert [str(w.message) for w in from_ids] == [str(w.message) for w in from_models] != []
