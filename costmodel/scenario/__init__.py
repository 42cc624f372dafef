"""Scenario files: workload, SLO and the API / self-host / hybrid options to compare.

The names below are imported on first use (`costmodel.lazy`): a leaf such as `costmodel.scenario.limits`
does not pull in the scenario model.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from costmodel.lazy import lazy_exports

if TYPE_CHECKING:
    from costmodel.scenario.distributions import (
        EmpiricalTokens,
        FixedTokens,
        LognormalTokens,
        TokenDistribution,
        UniformTokens,
    )
    from costmodel.scenario.model import (
        Scenario,
        check_scenario_ids,
        load_scenario,
        parse_scenario,
        scenario_id_problems,
        scenario_json_schema,
        scenario_json_schema_text,
        write_scenario_json_schema,
    )
    from costmodel.scenario.options import ApiOption, FleetPolicy, HybridOption, Option, SelfHostOption
    from costmodel.scenario.search import SearchSettings
    from costmodel.scenario.slo import Slo, SloLimit
    from costmodel.scenario.workload import Workload
    from costmodel.units import DAYS_PER_MONTH, SECONDS_PER_MONTH

_HOMES = {
    "costmodel.scenario.distributions": ("EmpiricalTokens", "FixedTokens", "LognormalTokens", "TokenDistribution",
                                         "UniformTokens"),
    "costmodel.scenario.model": ("Scenario", "check_scenario_ids", "load_scenario", "parse_scenario",
                                 "scenario_id_problems", "scenario_json_schema", "scenario_json_schema_text",
                                 "write_scenario_json_schema"),
    "costmodel.scenario.options": ("ApiOption", "FleetPolicy", "HybridOption", "Option", "SelfHostOption"),
    "costmodel.scenario.search": ("SearchSettings",),
    "costmodel.scenario.slo": ("Slo", "SloLimit"),
    "costmodel.scenario.workload": ("Workload",),
    "costmodel.units": ("DAYS_PER_MONTH", "SECONDS_PER_MONTH"),
}

__all__ = [
    "DAYS_PER_MONTH",
    "SECONDS_PER_MONTH",
    "ApiOption",
    "EmpiricalTokens",
    "FixedTokens",
    "FleetPolicy",
    "HybridOption",
    "LognormalTokens",
    "Option",
    "Scenario",
    "SearchSettings",
    "SelfHostOption",
    "Slo",
    "SloLimit",
    "TokenDistribution",
    "UniformTokens",
    "Workload",
    "check_scenario_ids",
    "load_scenario",
    "parse_scenario",
    "scenario_id_problems",
    "scenario_json_schema",
    "scenario_json_schema_text",
    "write_scenario_json_schema",
]
__getattr__, __dir__ = lazy_exports(__name__, _HOMES, globals(), exported=__all__)
