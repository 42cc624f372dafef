"""scripts/function_lengths.py: function lengths from `ast`, on a small source written out here."""

from __future__ import annotations

from pathlib import Path

import pytest

from scripts.function_lengths import FunctionLength, function_lengths, longest, main

SOURCE = '''\
def short():
    return 1


@decorator
def outer(x):
    def inner():
        return x

    return inner


class Thing:
    async def method(self):
        a = 1
        b = 2
        return a + b
'''


def test_lengths_count_decorators_nesting_and_methods():
    rows = sorted(function_lengths(SOURCE, path="m.py"), key=lambda fn: fn.line)
    assert rows == [
        FunctionLength(2, "m.py", 1, "short"),  # lines 1-2
        FunctionLength(6, "m.py", 6, "outer"),  # @decorator on line 5 through `return inner` on line 10
        FunctionLength(2, "m.py", 7, "outer.inner"),  # lines 7-8
        FunctionLength(4, "m.py", 14, "Thing.method"),  # lines 14-17
    ]


def test_longest_walks_folders_and_cli_prints_rows(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "m.py").write_text(SOURCE, encoding="utf-8")
    (tmp_path / "pkg" / "notes.txt").write_text("def not_python(): pass\n", encoding="utf-8")
    top = longest([tmp_path / "pkg"], top=2)
    assert [fn.name for fn in top] == ["outer", "Thing.method"]
    assert main([str(tmp_path / "pkg"), "--top", "1"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 1 and out[0].split()[0] == "6" and out[0].endswith("outer")
    with pytest.raises(SystemExit):
        main([str(tmp_path / "missing")])
    with pytest.raises(SystemExit):
        main([str(tmp_path / "pkg"), "--top", "0"])
