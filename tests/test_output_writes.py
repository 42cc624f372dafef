"""Output files that cannot be written: checked before the work, and a write that still fails (disk full)
exits 2 naming the path and keeps the work (printed on stdout, or saved elsewhere and named).

`prices refresh`, `memo --out`, `calibrate --out` and `models import --out` used to trace back with an
uncaught OSError, memo and calibrate after their whole run. A full disk is simulated by making the final
rename into one folder fail with ENOSPC (`os.replace` there), which is where an atomic write meets a full
filesystem last; every other write (the temp folder the memo falls back to) works as usual.
"""

from __future__ import annotations

import datetime as dt
import errno
import json
import os
import shutil
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import yaml

from costmodel.cli import main
from costmodel.errors import CostmodelError, UnwrittenOutputError
from costmodel.measurements.calibration import Calibration
from costmodel.pricing import default_sheet_path
from costmodel.pricing.refresh import refresh_sheet

ROOT = Path(__file__).resolve().parents[1]
PROBE = ROOT / "examples" / "probe-cpu.json"
CHAT = ROOT / "examples" / "chat-assistant.yaml"
UNWRITABLE = ["/proc/version", "/proc/costmodel-test/out.json"]  # no file can be created under /proc, even by root


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.fixture
def full_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A folder where every atomic write fails at the end with ENOSPC (the temp file is removed)."""
    folder = tmp_path / "full"
    folder.mkdir()
    real_replace = os.replace

    def replace(src: Any, dst: Any, *args: Any, **kwargs: Any) -> None:
        if Path(dst).parent == folder:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(dst))
        real_replace(src, dst, *args, **kwargs)

    monkeypatch.setattr(os, "replace", replace)
    return folder


def _no_work(*args: Any, **kwargs: Any) -> Any:
    raise AssertionError("the work ran although its output path cannot be written")


# --- calibrate ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("out", [*UNWRITABLE, "DIR"])
def test_calibrate_refuses_a_bad_out_before_the_fit(out: str, tmp_path: Path, capsys, monkeypatch) -> None:
    monkeypatch.setattr("costmodel.cli.probe.fit_calibration", _no_work)
    target = str(tmp_path) if out == "DIR" else out
    code, stdout, err = cli(capsys, "calibrate", str(PROBE), "--out", target)
    assert code == 2 and stdout == ""
    assert f"--out {target}: cannot write there" in err


def test_calibrate_on_a_full_disk_prints_the_calibration(full_folder: Path, capsys) -> None:
    target = full_folder / "calibration.json"
    target.write_text("old\n")
    code, stdout, err = cli(capsys, "calibrate", str(PROBE), "--out", str(target))
    assert code == 2
    assert f"--out {target}: could not write the calibration (No space left on device)" in err
    assert "printed on stdout" in err
    calibration = Calibration.model_validate_json(stdout)  # the whole file, ready to save by hand
    assert calibration.hardware_id == "cpu" and calibration.points_fit > 0
    assert target.read_text() == "old\n" and sorted(p.name for p in full_folder.iterdir()) == ["calibration.json"]


# --- memo -----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("out", ["/proc/memo.pdf", "/proc/costmodel-test/memo.pdf"])
def test_memo_refuses_a_bad_out_before_the_build(out: str, capsys, monkeypatch) -> None:
    monkeypatch.setattr("costmodel.memo.build_memo", _no_work)
    code, stdout, err = cli(capsys, "memo", str(CHAT), "--out", out, "--date", "2026-12-01")
    assert code == 2 and stdout == "" and f"--out {out}: cannot write there" in err


def test_memo_on_a_full_disk_is_saved_elsewhere_and_named(full_folder: Path, capsys, monkeypatch,
                                                          tmp_path: Path) -> None:
    """The PDF (built by a stand-in here: the write path is under test, not the memo) goes to the temp
    folder, and the message names both paths."""
    pdf = b"%PDF-1.4 stand-in memo\n%%EOF\n"
    memo = SimpleNamespace(pdf=pdf, pages=3, content=SimpleNamespace(decision=SimpleNamespace(recommendation="x")))
    monkeypatch.setattr("costmodel.memo.build_memo", lambda *a, **k: memo)
    spare = tmp_path / "spare"
    spare.mkdir()
    monkeypatch.setattr("tempfile.gettempdir", lambda: str(spare))
    target = full_folder / "memo.pdf"
    code, stdout, err = cli(capsys, "memo", str(CHAT), "--out", str(target), "--date", "2026-12-01")
    assert code == 2 and stdout == ""
    assert f"--out {target}: could not write the memo (No space left on device); saved it to {spare}" in err
    [saved] = list(spare.iterdir())
    assert saved.read_bytes() == pdf and saved.name.endswith("-memo.pdf") and str(saved) in err
    assert not target.exists()


# --- models import --------------------------------------------------------------------------------------

QWEN_CONFIG = {
    "architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2", "hidden_size": 3584, "intermediate_size": 18944,
    "num_attention_heads": 28, "num_hidden_layers": 28, "num_key_value_heads": 4, "vocab_size": 152064,
    "tie_word_embeddings": False, "max_position_embeddings": 32768, "rope_theta": 1000000.0, "torch_dtype": "bfloat16",
}


def _config(tmp_path: Path) -> Path:
    cfg = tmp_path / "my-qwen" / "config.json"
    cfg.parent.mkdir()
    cfg.write_text(json.dumps(QWEN_CONFIG))
    return cfg


@pytest.mark.parametrize("force", [False, True])
def test_models_import_to_proc_is_refused(force: bool, tmp_path: Path, capsys) -> None:
    argv = ["models", "import", str(_config(tmp_path)), "--out", "/proc/my-qwen.yaml", *(["--force"] * force)]
    code, stdout, err = cli(capsys, *argv)
    assert code == 2 and stdout == "" and "--out /proc/my-qwen.yaml: cannot write there" in err


@pytest.mark.parametrize("force", [False, True])
def test_models_import_on_a_full_disk_prints_the_model_file(force: bool, full_folder: Path, tmp_path: Path,
                                                           capsys, monkeypatch) -> None:
    target = full_folder / "my-qwen.yaml"
    if not force:  # the exclusive create links the temp file into place; make that fail the same way
        monkeypatch.setattr(os, "link", lambda *a, **k: (_ for _ in ()).throw(OSError(errno.ENOSPC, "No space left on device")))
        monkeypatch.setattr("builtins.open", _full_open(open, full_folder))
    argv = ["models", "import", str(_config(tmp_path)), "--out", str(target), *(["--force"] * force)]
    code, stdout, err = cli(capsys, *argv)
    assert code == 2 and "could not write the model file (No space left on device)" in err
    assert yaml.safe_load(stdout)["hidden_size"] == 3584
    assert not target.exists()


def _full_open(real_open: Any, folder: Path) -> Any:
    def fake_open(file: Any, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
        if "x" in mode and Path(file).parent == folder:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_open(file, mode, *args, **kwargs)
    return fake_open


def test_models_import_json_keeps_one_object_on_stdout(full_folder: Path, tmp_path: Path, capsys) -> None:
    target = full_folder / "my-qwen.yaml"
    code, stdout, err = cli(capsys, "models", "import", str(_config(tmp_path)), "--out", str(target), "--force",
                            "--json")
    payload = json.loads(stdout)
    assert code == 2 and payload["written"] is False and payload["path"] == str(target)
    assert yaml.safe_load(payload["content"])["hidden_size"] == 3584


# --- prices refresh -------------------------------------------------------------------------------------

def test_prices_refresh_checks_the_sheet_path_before_the_download(monkeypatch) -> None:
    monkeypatch.setattr("costmodel.pricing.refresh.download", _no_work)
    with pytest.raises(CostmodelError, match="--file /proc/version: cannot write there"):
        refresh_sheet("gpu", path="/proc/version", url="http://127.0.0.1:9/gpu.csv", today=dt.date(2026, 12, 1))


def test_prices_refresh_on_a_full_disk_prints_the_sheet_and_keeps_the_old(full_folder: Path, monkeypatch,
                                                                           capsys) -> None:
    sheet = full_folder / "gpu_prices.csv"
    shutil.copyfile(default_sheet_path("gpu"), sheet)
    body = default_sheet_path("gpu").read_bytes()
    monkeypatch.setattr("costmodel.pricing.refresh.download", lambda url, **kwargs: body)
    with pytest.raises(UnwrittenOutputError) as err:
        refresh_sheet("gpu", path=sheet, url="http://127.0.0.1:9/gpu.csv", today=dt.date(2026, 12, 1))
    assert f"--file {sheet}: could not write the refreshed sheet (No space left on device)" in str(err.value)
    assert err.value.content.splitlines()[0] == body.decode().splitlines()[0]
    assert sheet.read_bytes() == body
    code, stdout, stderr = cli(capsys, "prices", "refresh", "--sheet", "gpu", "--file", str(sheet),
                               "--url", "http://127.0.0.1:9/gpu.csv")
    assert code == 2 and stdout.splitlines()[0] == body.decode().splitlines()[0]
    assert f"--file {sheet}: could not write" in stderr
