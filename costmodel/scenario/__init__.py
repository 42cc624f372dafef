"""Scenario files: workload, SLO and the API / self-host / hybrid options to compare."""

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
