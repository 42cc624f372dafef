"""The user's model folder and `models import` against hostile input (issue 10, items 9, 11, 14):
one broken file must not break every command, concurrent imports cannot both win, names are echoed
without terminal escapes, and shapes that are not real are refused."""

from __future__ import annotations

import json
import threading
import warnings
from pathlib import Path

import pytest
import yaml
from test_cli_catalog import QWEN_CONFIG

from costmodel.catalog import loader
from costmodel.catalog.hf_import import import_hf_config
from costmodel.cli import catalog as cli_catalog
from costmodel.cli import main
from costmodel.errors import CostmodelError
from costmodel.fileio import atomic_create_bytes

HOSTILE = ("\x1b", "\x07", "\u202e")


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("COSTMODEL_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


def _import(capsys, tmp_path: Path, config: dict, model_id: str) -> tuple[int, str, str]:
    cfg = tmp_path / f"{model_id}-src" / "config.json"
    cfg.parent.mkdir(exist_ok=True)
    cfg.write_text(json.dumps(config))
    return _run(capsys, "models", "import", str(cfg), "--id", model_id, "--json", "--date", "2026-12-01")


def test_a_broken_user_model_file_is_skipped_with_a_warning(home: Path, tmp_path: Path, capsys) -> None:
    assert _import(capsys, tmp_path, QWEN_CONFIG, "good-qwen")[0] == 0
    broken = home / "models" / "broken.yaml"
    broken.write_text("id: broken\nname: [unclosed\n")
    shadow = home / "models" / "llama-3.1-8b.yaml"
    shadow.write_text((home / "models" / "good-qwen.yaml").read_text().replace("id: good-qwen", "id: llama-3.1-8b"))

    code, out, err = _run(capsys, "models", "list", "--json")
    assert code == 0
    ids = {row["id"] for row in json.loads(out)["models"]}
    assert {"good-qwen", "llama-3.1-8b", "tiny-test"} <= ids and "broken" not in ids
    assert f"costmodel: warning: skipped a model file: {broken}: not valid YAML" in err
    assert f"{shadow}: id 'llama-3.1-8b' shadows a bundled model" in err
    # Other commands work, the imported model included, and the bundled llama is the bundled one.
    code, out, _ = _run(capsys, "estimate", "--model", "good-qwen", "--hardware", "l40s", "--json")
    assert code == 0 and json.loads(out)["kv_bytes_per_token"] == 2 * 28 * 4 * 128 * 2
    with pytest.warns(loader.CatalogWarning) as record:
        assert loader.load_model("llama-3.1-8b").hidden_size == 4096
    assert any("shadows a bundled model" in str(w.message) for w in record)
    # Asking for the broken model names the file and the problem.
    code, out, err = _run(capsys, "estimate", "--model", "broken", "--hardware", "l40s")
    assert code == 2 and out == ""
    assert f"model 'broken' cannot be loaded: {broken}: not valid YAML" in err


def test_the_library_warns_instead_of_printing(home: Path, capsys) -> None:
    (home / "models").mkdir(parents=True)
    (home / "models" / "bad-utf8.yaml").write_bytes(b"id: bad-utf8\nname: \xff\xfe\n")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        table = loader.models()
    assert "tiny-test" in table and "bad-utf8" not in table
    assert [w.category for w in caught] == [loader.CatalogWarning]
    assert "bad-utf8.yaml: not UTF-8 text" in str(caught[0].message)
    assert loader.skipped_model_files().keys() == {"bad-utf8"}
    assert capsys.readouterr() == ("", "")  # nothing printed by the library
    with warnings.catch_warnings(record=True) as asked:
        warnings.simplefilter("always")
        with pytest.raises(CostmodelError, match="model 'bad-utf8' cannot be loaded: .*bad-utf8.yaml: not UTF-8"):
            loader.load_model("bad-utf8")
    assert asked == []  # asked for by name: the error says it all, no warning besides


def test_atomic_create_is_exclusive_under_a_race(tmp_path: Path) -> None:
    target = tmp_path / "model.yaml"
    start = threading.Barrier(8)
    outcomes: list[object] = [None] * 8

    def create(index: int) -> None:
        start.wait()
        try:
            atomic_create_bytes(target, f"writer {index}\n".encode())
            outcomes[index] = "created"
        except FileExistsError:
            outcomes[index] = "exists"

    threads = [threading.Thread(target=create, args=(i,)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert outcomes.count("created") == 1 and outcomes.count("exists") == 7
    winner = outcomes.index("created")
    assert target.read_text() == f"writer {winner}\n"  # the winner's whole file, never overwritten
    assert target.stat().st_mode & 0o777 == 0o644
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model.yaml"]  # no temp files left


def test_two_concurrent_imports_cannot_both_succeed(
    home: Path, tmp_path: Path, capsys, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Both imports are held at a barrier after validating and serializing, just before they write: with a
    # check-then-write both would see no file and both would "succeed".
    barrier = threading.Barrier(2)
    real_dump = yaml.safe_dump

    def dump_then_wait(*args: object, **kwargs: object) -> str:
        text = real_dump(*args, **kwargs)  # type: ignore[arg-type]
        barrier.wait(timeout=30)
        return text

    monkeypatch.setattr(cli_catalog.yaml, "safe_dump", dump_then_wait)
    cfg = tmp_path / "src" / "config.json"
    cfg.parent.mkdir()
    cfg.write_text(json.dumps(QWEN_CONFIG))
    codes: list[int] = []

    def run_import() -> None:
        codes.append(main(["models", "import", str(cfg), "--id", "raced", "--json", "--date", "2026-12-01"]))

    threads = [threading.Thread(target=run_import) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    err = capsys.readouterr().err
    assert sorted(codes) == [0, 2]
    assert "raced.yaml exists; pass --force" in err
    assert yaml.safe_load((home / "models" / "raced.yaml").read_text())["id"] == "raced"


def test_imported_names_lose_terminal_escapes(home: Path, tmp_path: Path, capsys) -> None:
    evil = dict(QWEN_CONFIG, _name_or_path="\x1b]0;pwned\x07\x1b[2J/models/\u202eevil-qwen")
    spec = import_hf_config(evil, model_id="x", source="test")
    assert spec.name == "]0;pwned[2J/models/evil-qwen"
    assert _import(capsys, tmp_path, evil, "evil-qwen")[0] == 0
    code, out, err = _run(capsys, "models", "list")
    assert code == 0 and "evil-qwen" in out
    assert not any(char in out + err for char in HOSTILE)
    # A hand-edited file with an escape in its name is skipped (and named), never printed raw.
    path = home / "models" / "evil-qwen.yaml"
    data = yaml.safe_load(path.read_text())
    path.write_text(yaml.safe_dump({**data, "name": "\x1b[31mevil\u202e"}))  # YAML writes it as "\e[31m..."
    code, out, err = _run(capsys, "models", "list")
    assert code == 0 and "evil-qwen" not in out and "control, bidi or other invisible characters" in err
    assert not any(char in out + err for char in HOSTILE)


@pytest.mark.parametrize(
    ("update", "fragment"),
    [
        ({"num_hidden_layers": True}, "field 'num_hidden_layers': Input should be a valid integer"),
        ({"hidden_size": 3585}, "hidden_size (3585) is not a multiple of num_attention_heads (28)"),
        ({"hidden_size": 1e30}, "field 'hidden_size': Input should be a valid integer"),
        ({"hidden_size": 10**30}, "field 'hidden_size': Input should be less than or equal to 262144"),
        ({"vocab_size": 2**63}, "field 'vocab_size': Input should be less than or equal to 4194304"),
        ({"intermediate_size": 18944.0}, "field 'intermediate_size': Input should be a valid integer"),
        ({"num_key_value_heads": "4"}, "field 'num_key_value_heads': Input should be a valid integer"),
        ({"max_position_embeddings": 2**40}, "max_position_embeddings"),
        ({"tie_word_embeddings": "yes"}, "field 'tie_word_embeddings'"),
    ],
)
def test_shapes_that_are_not_real_are_refused(update: dict, fragment: str) -> None:
    with pytest.raises(CostmodelError) as err:
        import_hf_config(dict(QWEN_CONFIG, **update), model_id="x", source="test")
    assert fragment in str(err.value)


def test_real_shapes_still_import() -> None:
    # Gemma-style: head_dim given, so hidden_size need not be heads x head_dim (3072 vs 16 x 256).
    gemma = dict(QWEN_CONFIG, model_type="gemma", hidden_size=3072, num_attention_heads=16, num_key_value_heads=16,
                 head_dim=256, intermediate_size=24576, vocab_size=256000)
    assert import_hf_config(gemma, model_id="g", source="test").head_dim_resolved == 256
    assert import_hf_config(QWEN_CONFIG, model_id="q", source="test").hidden_size == 3584
