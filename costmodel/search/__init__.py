"""Search the deployment space: enumerate self-host configurations, screen them with the roofline, simulate
the survivors and report the cheapest SLO-feasible ones and the Pareto front (`costmodel search`)."""

from costmodel.search.executors import LocalExecutor, RayExecutor, check_ray_address, make_executor
from costmodel.search.run import (
    Configuration,
    SearchResult,
    option_name,
    pareto_front,
    search,
    with_configuration,
    with_searched_options,
)
from costmodel.search.space import Candidate, enumerate_candidates

__all__ = ["Candidate", "Configuration", "LocalExecutor", "RayExecutor", "SearchResult", "check_ray_address",
           "enumerate_candidates", "make_executor", "option_name", "pareto_front", "search", "with_configuration",
           "with_searched_options"]
