"""Every path a user or one of their files names is read by one bounded reader
(costmodel.fileio.read_user_text): it refuses what is not a regular file (a folder, a FIFO, a device such
as /dev/zero, also behind a symlink), caps the size, and names the path.

Before, a FIFO in $COSTMODEL_HOME/models hung `models list`, `estimate` and `compare`; `compare <fifo>` and a
scenario's `calibration: <fifo>` hung for good; a *.yaml symlink to /dev/zero read until the process was
killed. A FIFO's open blocks until a writer comes, so each FIFO here has a helper that, if a reader is still
blocked after UNBLOCK_AFTER_SECONDS, opens the write end once: the old code then gets an empty file and
fails the assertions instead of hanging the suite.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from costmodel.catalog import loader
from costmodel.cli import main
from costmodel.errors import CostmodelError
from costmodel.fileio import MAX_USER_FILE_BYTES, read_user_text

ROOT = Path(__file__).resolve().parents[1]
CHAT = ROOT / "examples" / "chat-assistant.yaml"
UNBLOCK_AFTER_SECONDS = 10.0

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs (POSIX)")


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.fixture
def make_fifo(tmp_path: Path) -> Iterator[object]:
    stop = threading.Event()
    threads: list[threading.Thread] = []

    def unblock(path: Path) -> None:
        if stop.wait(UNBLOCK_AFTER_SECONDS):
            return
        while not stop.wait(0.2):  # a reader blocked in open(): give it a writer, then EOF
            try:
                os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))
            except OSError:  # no reader waiting (ENXIO)
                continue

    def make(name: str, folder: Path = tmp_path) -> Path:
        path = folder / name
        os.mkfifo(path)
        thread = threading.Thread(target=unblock, args=(path,), daemon=True)
        thread.start()
        threads.append(thread)
        return path

    yield make
    stop.set()
    for thread in threads:
        thread.join(timeout=5)


@pytest.fixture
def models_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "home" / "models"
    folder.mkdir(parents=True)
    monkeypatch.setenv("COSTMODEL_HOME", str(tmp_path / "home"))
    loader._read_model_dir.cache_clear()
    return folder


def test_compare_a_fifo_is_refused_by_name(make_fifo, capsys) -> None:
    fifo = make_fifo("scenario.yaml")
    code, out, err = cli(capsys, "compare", str(fifo))
    assert code == 2 and out == ""
    assert f"scenario file {fifo} is not a regular file (it is a FIFO)" in err


def test_a_scenario_calibration_path_to_a_fifo_is_refused_by_name(make_fifo, tmp_path: Path, capsys) -> None:
    fifo = make_fifo("cal.json")
    data = yaml.safe_load(CHAT.read_text(encoding="utf-8"))
    data["options"] = [o for o in data["options"] if o["kind"] == "self-host"][:1]
    data["options"][0]["calibration"] = str(fifo)
    scenario = tmp_path / "s.yaml"
    scenario.write_text(yaml.safe_dump(data), encoding="utf-8")
    code, _, err = cli(capsys, "compare", str(scenario), "--json")
    assert code == 2 and f"calibration file {fifo} is not a regular file (it is a FIFO)" in err


def test_a_fifo_a_dev_zero_link_and_a_folder_in_the_models_folder_are_skipped(make_fifo, models_home: Path,
                                                                               capsys) -> None:
    make_fifo("hang.yaml", models_home)
    (models_home / "folder.yaml").mkdir()
    if Path("/dev/zero").exists():
        (models_home / "zero.yaml").symlink_to("/dev/zero")
    code, out, err = cli(capsys, "models", "list")
    assert code == 0 and "llama-3.1-8b" in out, err
    assert f"{models_home / 'hang.yaml'} is not a regular file (it is a FIFO)" in err
    assert f"{models_home / 'folder.yaml'} is a directory" in err
    if Path("/dev/zero").exists():
        assert f"{models_home / 'zero.yaml'} is not a regular file (it is a character device)" in err
    code, out, _ = cli(capsys, "estimate", "--model", "llama-3.1-8b", "--hardware", "l4", "--json")
    assert code == 0
    code, _, err = cli(capsys, "estimate", "--model", "hang", "--hardware", "l4")
    assert code == 2 and "model 'hang' cannot be loaded" in err and "FIFO" in err


def test_an_oversized_model_file_is_skipped_without_reading_it_all(models_home: Path, capsys) -> None:
    (models_home / "big.yaml").write_bytes(b"#" * (MAX_USER_FILE_BYTES + 1))
    code, _, err = cli(capsys, "models", "list")
    assert code == 0 and f"{models_home / 'big.yaml'} is 8,388,609 bytes, larger than 8 MiB" in err


@pytest.mark.parametrize("argv", [
    ("prices", "list", "--file", "{fifo}"),
    ("prices", "list", "--sheet", "gpu", "--file", "{fifo}"),
    ("models", "import", "{fifo}", "--id", "x"),
    ("calibrate", "{fifo}", "--out", "{tmp}/cal.json"),
    ("calibrate-endpoint", "{fifo}", "--out", "{tmp}/cal.json"),
])
def test_every_file_flag_refuses_a_fifo(argv: tuple[str, ...], make_fifo, tmp_path: Path, capsys) -> None:
    fifo = make_fifo("input")
    code, out, err = cli(capsys, *(a.format(fifo=fifo, tmp=tmp_path) for a in argv))
    assert code == 2 and out == "" and f"{fifo} is not a regular file (it is a FIFO)" in err


def test_the_reader_by_hand(tmp_path: Path) -> None:
    good = tmp_path / "ok.yaml"
    good.write_text("a: 1\n", encoding="utf-8")
    link = tmp_path / "link.yaml"
    link.symlink_to(good)
    assert read_user_text(link, what="file") == "a: 1\n"  # a symlink to a regular file is fine
    with pytest.raises(CostmodelError, match=r"file .*missing.yaml not found"):
        read_user_text(tmp_path / "missing.yaml", what="file")
    with pytest.raises(CostmodelError, match="is a directory; pass a file"):
        read_user_text(tmp_path, what="file")
    six = tmp_path / "six.txt"
    six.write_text("123456", encoding="utf-8")
    with pytest.raises(CostmodelError, match="is 6 bytes, larger than"):
        read_user_text(six, what="file", max_bytes=5)
