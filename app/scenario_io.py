"""Scenario files for the app: bundled examples, upload parsing, and the bytes of the download buttons.

A saved file re-loads to an equal Scenario (tests/test_app_state.py checks the round trip).
"""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from costmodel.errors import CostmodelError
from costmodel.measurements.calibration_files import is_inline
from costmodel.scenario import ApiOption, Scenario, SelfHostOption, parse_scenario

EXAMPLES_DIR = Path(__file__).resolve().parents[1] / "examples"
DEFAULT_EXAMPLE = "chat-assistant.yaml"
MAX_UPLOAD_BYTES = 2_000_000


def example_names() -> list[str]:
    """File names of the bundled examples (examples/*.yaml), default first."""
    names = sorted(p.name for p in EXAMPLES_DIR.glob("*.yaml"))
    return sorted(names, key=lambda n: n != DEFAULT_EXAMPLE)


def load_example(name: str) -> Scenario:
    """One bundled example by file name."""
    if name not in example_names():
        raise CostmodelError(f"no bundled example '{name}'; pick one of {', '.join(example_names())}")
    return parse_text((EXAMPLES_DIR / name).read_text(encoding="utf-8"), filename=name)


def parse_text(text: str, *, filename: str) -> Scenario:
    """YAML or JSON text (by extension; YAML also reads JSON) -> validated Scenario."""
    try:
        data = json.loads(text) if filename.lower().endswith(".json") else yaml.safe_load(text)
    except (json.JSONDecodeError, yaml.YAMLError) as exc:
        kind = "JSON" if filename.lower().endswith(".json") else "YAML"
        raise CostmodelError(f"{filename}: not valid {kind} ({str(exc).splitlines()[0]}); fix the syntax") from None
    return parse_scenario(data, where=filename)


def file_references(scenario: Scenario) -> list[str]:
    """'option: path' for every `calibration:` entry that names a file instead of holding its JSON inline."""
    found = []
    for option in scenario.options:
        if isinstance(option, SelfHostOption):
            entries: tuple[str, ...] = option.calibration_paths()
        elif isinstance(option, ApiOption) and option.calibration is not None:
            entries = (option.calibration,)
        else:
            entries = ()
        found += [f"{option.name}: {entry[:80]}" for entry in entries if not is_inline(entry)]
    return found


def refuse_file_references(scenario: Scenario, *, where: str) -> Scenario:
    """The scenario, unless it names a measurement file by path: a link or an upload would then make the
    server read (or reveal whether it has) one of its own files. The app takes measurements inline only."""
    found = file_references(scenario)
    if found:
        raise CostmodelError(
            f"{where} names calibration file(s) by path ({'; '.join(found)}); the app reads no file of the server: "
            "upload each measurement on the Scenario page (option details) or the Probes page, which write it "
            "inline, or put the file's JSON text itself in `calibration:`")
    return scenario


def parse_upload(filename: str, content: bytes) -> Scenario:
    """An uploaded scenario file (.yaml, .yml or .json); one that names a measurement file by path is refused."""
    if len(content) > MAX_UPLOAD_BYTES:
        raise CostmodelError(f"{filename}: {len(content):,} bytes is too large for a scenario file")
    try:
        text = content.decode("utf-8")
    except UnicodeDecodeError:
        raise CostmodelError(f"{filename}: not UTF-8 text; save the scenario as UTF-8 YAML or JSON") from None
    return refuse_file_references(parse_text(text, filename=filename), where=filename)


def _plain(scenario: Scenario) -> dict[str, object]:
    # None fields are left out: every one of them is an optional field whose default is None.
    return scenario.model_dump(mode="json", exclude_none=True)


def scenario_yaml_bytes(scenario: Scenario) -> bytes:
    """The scenario as a YAML file (field order as in the schema)."""
    return yaml.safe_dump(_plain(scenario), sort_keys=False, allow_unicode=True, width=110).encode("utf-8")


def scenario_json_bytes(scenario: Scenario) -> bytes:
    """The scenario as a JSON file."""
    return (json.dumps(_plain(scenario), indent=2) + "\n").encode("utf-8")


def file_stem(scenario: Scenario) -> str:
    """A safe file name stem from the scenario's name."""
    stem = "".join(c if c.isalnum() or c in "-_." else "-" for c in scenario.name.strip().lower())
    return stem.strip("-.") or "scenario"
