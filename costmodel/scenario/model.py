"""A scenario (workload + SLO + options), its YAML/JSON loader, id checks and exported JSON Schema.

`load_scenario` checks the file's shape; `check_scenario_ids` checks the ids it references against
the price sheets and catalogs the caller passes in (so this module needs neither).
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Collection, Mapping
from pathlib import Path
from typing import Annotated, Any

from pydantic import ConfigDict, Field, ValidationError, model_validator

from costmodel.errors import CostmodelError, unknown_id_error
from costmodel.fileio import atomic_write_text, parse_json_or_yaml, read_user_text
from costmodel.scenario.options import ApiOption, FleetPolicy, HybridOption, Option, SelfHostOption
from costmodel.scenario.quality import QualityFloor, check_substitute_groups
from costmodel.scenario.search import SearchSettings
from costmodel.scenario.slo import Slo
from costmodel.scenario.workload import Workload
from costmodel.strict import StrictModel

SCHEMA_PATH = Path(__file__).resolve().parents[2] / "docs" / "scenario.schema.json"
_TAGS = {"api", "self-host", "hybrid", "fixed", "uniform", "lognormal", "empirical"}
_HINTS = {
    "slo": "add an `slo:` section with ttft_p90_seconds and tpot_p90_seconds (seconds)",
    "workload": "add a `workload:` section (volume, prompt_tokens, output_tokens, traffic shape)",
    "options": "add `options:`, a list of api / self-host / hybrid options to compare",
    "price_id": "use a row id of pricing_data/api_prices.csv (`costmodel prices list`)",
    "prompt_tokens": "add e.g. `prompt_tokens: {kind: fixed, tokens: 1000}`",
    "output_tokens": "add e.g. `output_tokens: {kind: lognormal, mean_tokens: 300, sigma: 0.6}`",
}


class Scenario(StrictModel):
    """One decision to make: a workload, its latency SLO, and the options to compare."""

    model_config = ConfigDict(title="costmodel scenario")

    name: str = Field(min_length=1, description="what this scenario is, e.g. 'chat assistant, EU launch'")
    description: str = Field(default="", description="free text for the memo")
    as_of: dt.date | None = Field(
        default=None,
        description="evaluation date (YYYY-MM-DD) for retirements, price ages and the memo's date; "
        "default: the day the command runs (a `--date` flag overrides it)",
    )
    horizon_months: int = Field(
        default=12, ge=1, le=120,
        description="months the decision is evaluated over (growth applied month by month; retirements before "
        "as_of + horizon exclude an option); a `--horizon-months` flag overrides it",
    )
    owner: str = Field(default="", max_length=200,
                       description="who makes this decision (named in the memo's Sign-off section)")
    goals: list[Annotated[str, Field(min_length=1, max_length=500)]] = Field(
        default_factory=list, max_length=50, description="what the decision must achieve (memo: Goals and non-goals)")
    non_goals: list[Annotated[str, Field(min_length=1, max_length=500)]] = Field(
        default_factory=list, max_length=50, description="what is deliberately out of scope (memo: Goals and non-goals)")
    constraints: list[Annotated[str, Field(min_length=1, max_length=500)]] = Field(
        default_factory=list, max_length=50,
        description="hard limits the choice must respect, e.g. 'prompts stay in the EU' (memo: Context)")
    workload: Workload
    slo: Slo
    fleet: FleetPolicy = Field(
        default_factory=FleetPolicy,
        description="headroom (target_peak_utilization) and redundancy (min_replicas) for every self-host option",
    )
    options: list[Option] = Field(min_length=1, description="api, self-host and hybrid options to compare")
    quality: QualityFloor | None = Field(
        default=None, description="quality floor: options below it are shown but never recommended; "
        "without one (and without substitutes) the options are treated as substitutes")
    substitutes: list[list[str]] | None = Field(
        default=None, description="groups of option names that are substitutes; the recommendation's group "
        "is what it competes with (an option in no group is its own group)")
    accept_unverified_latency: bool = Field(
        default=False, description="rank API options with no measured or published latency with the verified "
        "ones (default: after them)")
    search: SearchSettings | None = Field(
        default=None, description="limits of the deployment search (`costmodel search`); default: the whole catalog"
    )

    @model_validator(mode="after")
    def _check_names(self) -> Scenario:
        names = [option.name for option in self.options]
        duplicates = sorted({n for n in names if names.count(n) > 1})
        if duplicates:
            raise ValueError(f"option names must be unique; rename the repeated {', '.join(duplicates)}")
        by_name = {option.name: option for option in self.options}
        if self.substitutes is not None:
            check_substitute_groups(self.substitutes, option_names=names)
        for option in self.options:
            if isinstance(option, HybridOption):
                for field, wanted in (("self_host", SelfHostOption), ("api", ApiOption)):
                    ref = getattr(option, field)
                    if not isinstance(by_name.get(ref), wanted):
                        kind = "self-host" if wanted is SelfHostOption else "api"
                        raise ValueError(
                            f"hybrid option '{option.name}': {field} '{ref}' must name a {kind} option in this "
                            f"scenario (have: {', '.join(names)})"
                        )
        return self

    def evaluation_date(self, *, override: dt.date | None = None) -> dt.date:
        """The one "as of" date: an explicit override (`--date`), else the scenario's `as_of`, else today."""
        return override or self.as_of or dt.date.today()

    def option(self, name: str) -> Option:
        """The option with exactly this name."""
        for candidate in self.options:
            if candidate.name == name:
                return candidate
        raise unknown_id_error("option", name, [o.name for o in self.options])


def _loc_text(loc: tuple[int | str, ...]) -> str:
    text = ""
    for part in loc:
        if isinstance(part, int):
            text += f"[{part}]"
        elif part not in _TAGS:
            text += f".{part}" if text else str(part)
    return text or "(scenario)"


def scenario_error_lines(err: ValidationError) -> list[tuple[str, str]]:
    """(top-level field, 'field: what is wrong; how to fix it') for each problem, so a form can show each
    message beside the widgets of its field."""
    lines = []
    for item in err.errors():
        loc = _loc_text(item["loc"])
        top = str(item["loc"][0]) if item["loc"] else ""
        last = next((p for p in reversed(item["loc"]) if isinstance(p, str) and p not in _TAGS), "")
        msg = str(item["msg"]).removeprefix("Value error, ")
        if item["type"] == "missing":
            text = f"{loc}: missing; {_HINTS.get(str(last), f'add `{last}`')}"
        elif item["type"] == "extra_forbidden":
            text = f"{loc}: unknown field; check the spelling (docs/scenario.schema.json lists the fields)"
        elif item["type"] in {"greater_than", "greater_than_equal", "less_than_equal", "less_than"}:
            text = f"{loc}: {msg} (got {item.get('input')!r}); fix the value"
        else:
            text = f"{loc}: {msg}"
        lines.append((top, text))
    return lines


def describe_scenario_error(err: ValidationError, *, where: str) -> str:
    """Each problem as 'file: field: what is wrong; how to fix it'."""
    return f"{where}: " + "; ".join(text for _, text in scenario_error_lines(err))


def parse_scenario(data: Any, *, where: str = "scenario") -> Scenario:
    """Validate already-parsed YAML/JSON data as a Scenario."""
    if not isinstance(data, Mapping):
        raise CostmodelError(f"{where}: a scenario is a mapping with name, workload, slo and options")
    try:
        return Scenario.model_validate(data)
    except ValidationError as err:
        raise CostmodelError(describe_scenario_error(err, where=where)) from None


def load_scenario(path: str | Path) -> Scenario:
    """Read a scenario file (.yaml/.yml, or .json) and validate its shape."""
    file_path = Path(path)
    text = read_user_text(file_path, what="scenario file")
    data = parse_json_or_yaml(text, what=str(file_path), as_json=file_path.suffix == ".json")
    return with_calibration_paths_from(parse_scenario(data, where=str(file_path)), base_dir=file_path.parent)


def _resolved(path: str, base_dir: Path) -> str:
    inline = path.lstrip().startswith("{")  # the file's JSON text itself (measurements/calibration_files)
    return path if inline or Path(path).is_absolute() else str(base_dir / path)


def with_calibration_paths_from(scenario: Scenario, *, base_dir: Path) -> Scenario:
    """The scenario with each option's relative `calibration:` paths made relative to `base_dir` (the
    scenario file's folder), so the scenario reads the same files from any working directory."""
    options: list[Option] = []
    for option in scenario.options:
        if isinstance(option, ApiOption) and option.calibration is not None:
            option = option.model_copy(update={"calibration": _resolved(option.calibration, base_dir)})
        elif isinstance(option, SelfHostOption) and option.calibration is not None:
            paths = [_resolved(p, base_dir) for p in option.calibration_paths()]
            option = option.model_copy(update={"calibration": paths[0] if len(paths) == 1 else paths})
        options.append(option)
    return scenario.model_copy(update={"options": options})


def _id_problem(
    option: Option,
    *,
    api_price_ids: Collection[str] | None,
    gpu_offerings: Mapping[str, str] | None,
    model_ids: Collection[str] | None,
    hardware_ids: Collection[str] | None,
) -> tuple[str, CostmodelError] | None:
    """(field, error) for the first unknown id an option references, else None."""
    if isinstance(option, ApiOption):
        if api_price_ids is not None and option.price_id not in api_price_ids:
            return "price_id", unknown_id_error("API price id", option.price_id, api_price_ids)
        return None
    if not isinstance(option, SelfHostOption):
        return None
    if model_ids is not None and option.model not in model_ids:
        return "model", unknown_id_error("model", option.model, model_ids)
    if hardware_ids is not None and option.hardware not in hardware_ids:
        return "hardware", unknown_id_error("hardware", option.hardware, hardware_ids)
    if gpu_offerings is not None and option.offering is not None:
        if option.offering not in gpu_offerings:
            return "offering", unknown_id_error("GPU offering", option.offering, gpu_offerings)
        if gpu_offerings[option.offering] != option.hardware:
            return "offering", CostmodelError(
                f"'{option.offering}' is for {gpu_offerings[option.offering]}, not {option.hardware}; "
                f"pick an offering of {option.hardware}"
            )
    return None


def scenario_id_problems(
    scenario: Scenario,
    *,
    api_price_ids: Collection[str] | None = None,
    gpu_offerings: Mapping[str, str] | None = None,
    model_ids: Collection[str] | None = None,
    hardware_ids: Collection[str] | None = None,
) -> dict[int, str]:
    """Option index -> 'options[i] ('name').field: what is unknown; did you mean ...', for every option
    that references an unknown id (the decision evaluates the others)."""
    found = {}
    for index, option in enumerate(scenario.options):
        problem = _id_problem(option, api_price_ids=api_price_ids, gpu_offerings=gpu_offerings,
                              model_ids=model_ids, hardware_ids=hardware_ids)
        if problem is not None:
            field, error = problem
            found[index] = f"options[{index}] ('{option.name}').{field}: {error}"
    return found


def check_scenario_ids(
    scenario: Scenario,
    *,
    api_price_ids: Collection[str] | None = None,
    gpu_offerings: Mapping[str, str] | None = None,
    model_ids: Collection[str] | None = None,
    hardware_ids: Collection[str] | None = None,
) -> None:
    """Raise CostmodelError naming option and field for the first referenced id that is not known.

    gpu_offerings maps GPU price row id -> accelerator id (an offering must be for the option's
    hardware). A None collection skips that check."""
    for index, option in enumerate(scenario.options):
        problem = _id_problem(option, api_price_ids=api_price_ids, gpu_offerings=gpu_offerings,
                              model_ids=model_ids, hardware_ids=hardware_ids)
        if problem is not None:
            field, error = problem
            raise CostmodelError(f"options[{index}] ('{option.name}').{field}: {error}")


def scenario_json_schema() -> dict[str, Any]:
    """The JSON Schema of a scenario file (what docs/scenario.schema.json holds)."""
    schema = Scenario.model_json_schema()
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", **schema}


def scenario_json_schema_text() -> str:
    """The schema as the exact text of docs/scenario.schema.json."""
    return json.dumps(scenario_json_schema(), indent=2, sort_keys=True) + "\n"


def write_scenario_json_schema(path: str | Path = SCHEMA_PATH) -> Path:
    """Regenerate docs/scenario.schema.json (a test fails when it is out of date)."""
    atomic_write_text(path, scenario_json_schema_text())
    return Path(path)
