"""The sane ranges of every number a user can give (scenario fields and the CLI flags that mirror them).

A value outside its range is refused with the field's name and the range, so that no typo (1e300
requests/day, a 10M-token prompt on a 131k-context model, a 1e-320 rate) turns into an answer or into
unbounded work. Each bound says why it is where it is.
"""

from __future__ import annotations

# Tokens per request: above the longest context windows sold today (Llama 4 Scout's 10M tokens).
MAX_TOKENS_PER_REQUEST = 10_000_000
# Requests per day: 1e10/day is ~116k requests/s, beyond the largest public LLM services; larger values
# are typos, and the fleet sizing and hybrid planning stay bounded below it.
MAX_REQUESTS_PER_DAY = 1e10
MIN_REQUESTS_PER_DAY = 1e-3  # one request in ~3 years: below this every $/M figure is noise
MAX_TOKENS_PER_MONTH = 1e15  # 1e10 requests/day x ~3,000 tokens x 30.4 days
MIN_TOKENS_PER_MONTH = 1.0
# The busiest hour of 24 can carry at most all of the day's traffic: 24x the mean.
MAX_PEAK_TO_MEAN = 24.0
MAX_HOURLY_WEIGHT = 1e12  # relative weights; only their ratios matter
MIN_HOURLY_WEIGHT_SUM = 1e-9  # below this the normalisation divides by (near) zero
MAX_GROWTH_PER_MONTH = 10.0  # +1000%/month; beyond it a 12-month horizon overflows any sane fleet
MIN_GROWTH_PER_MONTH = -0.99
# SLO limits: 1 us (tighter than any network round trip) to 1 day (batch results are due within 24 h).
MIN_LATENCY_SECONDS = 1e-6
MAX_LATENCY_SECONDS = 86_400.0
MAX_USD_PER_GPU_HOUR = 1_000.0  # the dearest accelerator-hour sold is ~$15; 1,000 catches unit mistakes
MAX_USD_PER_MONTH = 1e9  # ops budgets
MAX_LOGNORMAL_SIGMA = 3.0
MAX_GPUS_PER_REPLICA = 64
MAX_RATE_LIMIT_PER_MINUTE = 10**12
# Fleet policy: a replica floor above 1,000 per option is a typo for any single deployment we size.
MAX_MIN_REPLICAS = 1_000
MIN_TARGET_PEAK_UTILIZATION = 0.05  # below 5% of capacity at the peak the fleet is 20x oversized: a unit slip
# Ops and hosts: per-GPU ops above 730.5 x $1,000 (the GPU-hour ceiling) is a unit slip; a host share above
# $1M per GPU or 10 kW per GPU (a whole 8-GPU DGX H100 draws 10.2 kW) is a typo.
MAX_USD_PER_GPU_MONTH = 730_500.0
MAX_HOST_CAPEX_USD_PER_GPU = 1e6
MAX_HOST_POWER_KW_PER_GPU = 10.0
