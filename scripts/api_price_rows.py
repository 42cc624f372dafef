"""Which rows pricing_data/api_prices.csv holds, and where each comes from.

row_id: 'provider/model' (lower-case, what scenarios reference); litellm_key: the key in LiteLLM's
model_prices_and_context_window JSON (None: not in LiteLLM); genai_key: (provider id, model id) in
genai-prices (None: not there, or only under a different model name); open_model_id: the catalog
model a hosted open-weights row serves, so API and self-host of the same model can be compared.
"""

from __future__ import annotations

import datetime as dt
from typing import NamedTuple


class PricePage(NamedTuple):
    """Prices transcribed by hand from a pricing page (USD per million tokens; `as_of` is the page's own
    date, None when it shows none). The provider's own page (`own`) wins over LiteLLM and genai-prices;
    a third party's table is used only for rows neither source has, or as a cross-check."""

    url: str
    input_usd_per_mtok: float
    output_usd_per_mtok: float
    as_of: dt.date | None = None
    note: str = ""
    own: bool = True  # False: a third party's table of this provider's prices (source 'manual')


class RateLimits(NamedTuple):
    """A published paid-tier limit with the page it comes from (LiteLLM's rpm/tpm carry no tier)."""

    requests_per_minute: int | None
    tokens_per_minute: int | None
    tier: str
    source: str


class Retirement(NamedTuple):
    """The date a model stopped being sold (or will be), with the page that says so."""

    date: dt.date
    source: str


class Discounts(NamedTuple):
    """Batch and cached-input rates a provider's page publishes as fractions of its standard rates, applied to
    the rows that lack them (a rate the source already gives is kept)."""

    url: str
    note: str  # what the page says, with the date it was read
    cache_read_fraction: float | None = None  # cached input = fraction x input
    batch_fraction: float | None = None  # batch input and output = fraction x input and output


class RowSpec(NamedTuple):
    row_id: str
    litellm_key: str | None
    genai_key: tuple[str, str] | None
    open_model_id: str | None = None
    notes: str | None = None
    price_page: PricePage | None = None
    prefer_genai_prices: bool = False  # genai-prices over a disagreeing LiteLLM, when a third page agrees (notes)
    rate_limits: RateLimits | None = None
    retirement: Retirement | None = None
    price_as_of: dt.date | None = None  # the price's own date, e.g. the model's launch page
    crosscheck_page: PricePage | None = None  # a second source for rows genai-prices lacks
    discounts: Discounts | None = None  # published batch / cached-input discounts the sources lack


_FW = "fireworks_ai/accounts/fireworks/models/"
# Fireworks' serverless docs: cached input tokens "default 50% of input on text and vision models, unless a model
# lists a different cached rate"; "batch inference is billed at 50% of standard Serverless rates on both input and
# output".
_FW_DISCOUNTS = Discounts(
    "https://docs.fireworks.ai/serverless/overview",
    "cached input 50% of input (unless the model lists its own rate) and batch 50% of input and output, per "
    "docs.fireworks.ai/serverless/overview (page as stored, read 2026-12-01)",
    cache_read_fraction=0.5, batch_fraction=0.5)
# Groq: prompt caching "reducing ... token costs by 50% for cached portions" on openai/gpt-oss-20b and -120b
# (console.groq.com/docs/prompt-caching); the batch API at "-50%" (hivebook.wiki's May-2026 summary of
# console.groq.com/docs/batch; an older copy of that page said 25%).
_GROQ_BATCH = Discounts(
    "https://hivebook.wiki/wiki/groq-api-may-2026-lpu-inference-at-api-groq-com-openai-v1-chat-completions-audio-"
    "whisper-v3-turbo-batches-50-files-responses-beta-groq-compound-compound-mini-agent-systems-llama-3-4-gpt-oss-"
    "qwen3-python-npm-sdk-1-2-0",
    "batch 50% of input and output: /batches (50% discount, 24h-7d window), Groq API May 2026 on hivebook.wiki "
    "(read 2026-12-01; an older copy of console.groq.com/docs/batch said 25%); cached input 50% of input on gpt-oss "
    "per console.groq.com/docs/prompt-caching",
    batch_fraction=0.5)
# Lava AI Gateway's per-provider tables list each provider's per-token prices. Its DeepInfra table cross-checks
# every LiteLLM DeepInfra row it lists under the same model name: Llama-3.3-70B ($0.23 / $0.40) and
# DeepSeek-R1-0528 ($0.50 / $2.15) agree; Qwen3-32B, DeepSeek-V3, Llama-3.1-70B and Qwen2.5-72B disagree.
_LAVA_DEEPINFRA = "https://lava-a04d7b3f.mintlify.dev/docs/gateway/providers/deepinfra"
# Where Lava's DeepInfra table disagrees with LiteLLM and no dated DeepInfra page for the model is stored, LiteLLM
# stays primary (the cross-check policy) and the table's figure is the row's cross-check.
_KEPT = ("LiteLLM's {price} input is kept (the cross-check policy: no dated DeepInfra page for this model is "
         "stored)")
_LAVA_GMI = "https://lava-a04d7b3f.mintlify.dev/docs/gateway/providers/gmicloud"
_LAVA_INFERENCE = "https://lava-a04d7b3f.mintlify.dev/docs/gateway/providers/inference"
_GEMINI_LIMITS = (
    "no bundled rate limit: Google publishes per-model limits for paid tiers only in AI Studio "
    "(developersdigest.tech/rate-limits/google, read 2026-10-17); set requests_per_minute_limit / "
    "tokens_per_minute_limit in the scenario from your project's tier"
)
_FLASH_LITE_TIER1 = RateLimits(
    4000, 4_000_000, "tier 1 (paid)",
    "https://eonsr.com/gemini-rate-limit-planning-free-vs-tier-1/page/374 (Flash-Lite: free 15 RPM / 250k TPM; "
    "Tier 1 4,000 RPM / 4M TPM)",
)

ROW_SPECS: tuple[RowSpec, ...] = (
    # OpenAI
    RowSpec("openai/gpt-4o", "gpt-4o", ("openai", "gpt-4o")),
    RowSpec("openai/gpt-4o-mini", "gpt-4o-mini", ("openai", "gpt-4o-mini")),
    RowSpec("openai/gpt-4.1", "gpt-4.1", ("openai", "gpt-4.1")),
    RowSpec("openai/gpt-4.1-mini", "gpt-4.1-mini", ("openai", "gpt-4.1-mini")),
    RowSpec("openai/gpt-4.1-nano", "gpt-4.1-nano", ("openai", "gpt-4.1-nano")),
    RowSpec("openai/gpt-5", "gpt-5", ("openai", "gpt-5")),
    RowSpec("openai/gpt-5-mini", "gpt-5-mini", ("openai", "gpt-5-mini")),
    RowSpec("openai/gpt-5-nano", "gpt-5-nano", ("openai", "gpt-5-nano")),
    RowSpec("openai/gpt-5.4", "gpt-5.4", ("openai", "gpt-5.4")),
    RowSpec("openai/o3", "o3", ("openai", "o3")),
    RowSpec("openai/o4-mini", "o4-mini", ("openai", "o4-mini")),
    # Anthropic (cache writes: 5-minute TTL rate)
    RowSpec("anthropic/claude-sonnet-4-5", "claude-sonnet-4-5", ("anthropic", "claude-sonnet-4-5")),
    RowSpec("anthropic/claude-sonnet-4-6", "claude-sonnet-4-6", ("anthropic", "claude-sonnet-4-6")),
    RowSpec("anthropic/claude-haiku-4-5", "claude-haiku-4-5", ("anthropic", "claude-haiku-4-5")),
    RowSpec("anthropic/claude-haiku-5-5", "claude-haiku-5-5", ("anthropic", "claude-haiku-5-5"),
            price_as_of=dt.date(2026, 10, 7),
            notes=("verified 2026-12-01 against platform.claude.com/docs/en/models/haiku-5-5/overview (released "
                   "2026-10-07): $0.10 in / $0.50 out per MTok up to 100,000-token prompts, $0.50 / $2.50 above, "
                   "5-minute cache write $0.125 / $0.625; 10x below Haiku 4.5 is the published price. Its newer "
                   "tokenizer counts ~30% more tokens than Haiku 4.5 for the same text")),
    RowSpec("anthropic/claude-opus-4-5", "claude-opus-4-5", ("anthropic", "claude-opus-4-5")),
    # Google Gemini API
    RowSpec("google/gemini-2.5-pro", "gemini/gemini-2.5-pro", ("google", "gemini-2.5-pro"), notes=_GEMINI_LIMITS),
    RowSpec("google/gemini-2.5-flash", "gemini/gemini-2.5-flash", ("google", "gemini-2.5-flash"), notes=_GEMINI_LIMITS),
    RowSpec("google/gemini-2.5-flash-lite", "gemini/gemini-2.5-flash-lite", ("google", "gemini-2.5-flash-lite"),
            rate_limits=_FLASH_LITE_TIER1,
            notes="rate limits are Tier 1 (paid); LiteLLM's 15 requests/min is the free tier"),
    RowSpec("google/gemini-3.1-pro-preview", "gemini/gemini-3.1-pro-preview", ("google", "gemini-3.1-pro-preview"),
            notes=_GEMINI_LIMITS),
    # xAI, Mistral
    RowSpec("xai/grok-4.3", "xai/grok-4.3", ("x-ai", "grok-4.3")),
    RowSpec("mistral/mistral-large-2512", "mistral/mistral-large-2512", ("mistral", "mistral-large-2512")),
    RowSpec("mistral/mistral-small-2603", "mistral/mistral-small-2603", ("mistral", "mistral-small-2603")),
    # DeepSeek's own API
    RowSpec("deepseek/deepseek-chat", "deepseek/deepseek-chat", ("deepseek", "deepseek-chat"),
            notes="alias of DeepSeek's current chat model (V3.2 at import), not pinned to deepseek-v3"),
    RowSpec("deepseek/deepseek-v3", "deepseek/deepseek-v3", None, "deepseek-v3",
            retirement=Retirement(dt.date(2025, 8, 21), "https://api-docs.deepseek.com/updates (2025-08-21: deepseek-chat "
                                  "upgraded to DeepSeek-V3.1)"),
            notes=("no longer sold: DeepSeek's API serves V3.1 and later under deepseek-chat since 2025-08-21, and the "
                   "$0.27 / $1.10 price list ended 2025-09-05 16:00 UTC (api-docs.deepseek.com/quick_start/pricing)")),
    # Together AI
    RowSpec("together/llama-3.3-70b", "together_ai/meta-llama/Llama-3.3-70B-Instruct-Turbo",
            ("together", "meta-llama/Llama-3.3-70B-Instruct-Turbo"), "llama-3.3-70b", prefer_genai_prices=True,
            notes=("genai-prices' $0.88 kept over LiteLLM's $1.04: mastra.ai/models/v1/providers/togetherai also "
                   "lists $0.88 / $0.88 for meta-llama/Llama-3.3-70B-Instruct-Turbo")),
    RowSpec("together/llama-3.1-8b", "together_ai/meta-llama/Meta-Llama-3.1-8B-Instruct-Turbo",
            ("together", "meta-llama/Meta-Llama-3.1-8B-Instruct-Turbo"), "llama-3.1-8b"),
    RowSpec("together/llama-3.1-70b", "together_ai/meta-llama/Meta-Llama-3.1-70B-Instruct-Turbo",
            ("together", "meta-llama/Meta-Llama-3.1-70B-Instruct-Turbo"), "llama-3.1-70b"),
    RowSpec("together/llama-3.1-405b", "together_ai/meta-llama/Llama-3.1-405B-Instruct", None, "llama-3.1-405b"),
    RowSpec("together/mixtral-8x7b", "together_ai/mistralai/Mixtral-8x7B-Instruct-v0.1",
            ("together", "mistralai/Mixtral-8x7B-Instruct-v0.1"), "mixtral-8x7b"),
    RowSpec("together/mistral-7b", "together_ai/mistralai/Mistral-7B-Instruct-v0.3", None, "mistral-7b"),
    RowSpec("together/qwen2.5-72b", "together_ai/Qwen/Qwen2.5-72B-Instruct", None, "qwen2.5-72b"),
    RowSpec("together/qwen2.5-7b", "together_ai/Qwen/Qwen2.5-7B-Instruct-Turbo", None, "qwen2.5-7b"),
    RowSpec("together/deepseek-v3", "together_ai/deepseek-ai/DeepSeek-V3", None, "deepseek-v3"),
    RowSpec("together/gpt-oss-120b", "together_ai/openai/gpt-oss-120b", ("together", "openai/gpt-oss-120b"),
            "gpt-oss-120b"),
    RowSpec("together/gpt-oss-20b", "together_ai/openai/gpt-oss-20b", None, "gpt-oss-20b"),
    # Fireworks AI
    RowSpec("fireworks/llama-3.3-70b", _FW + "llama-v3p3-70b-instruct", None, "llama-3.3-70b"),
    RowSpec("fireworks/llama-3.1-8b", _FW + "llama-v3p1-8b-instruct", ("fireworks", "llama-v3p1-8b-instruct"),
            "llama-3.1-8b",
            price_page=PricePage("https://fireworks.ai/pricing", 0.2, 0.2,
                                 note="serverless, base model up to 16B parameters: $0.20 per 1M tokens")),
    RowSpec("fireworks/llama-3.1-70b", _FW + "llama-v3p1-70b-instruct", None, "llama-3.1-70b"),
    RowSpec("fireworks/llama-3.1-405b", _FW + "llama-v3p1-405b-instruct", None, "llama-3.1-405b"),
    RowSpec("fireworks/mixtral-8x7b", _FW + "mixtral-8x7b-instruct", None, "mixtral-8x7b"),
    RowSpec("fireworks/deepseek-v3", _FW + "deepseek-v3", None, "deepseek-v3"),
    RowSpec("fireworks/gpt-oss-120b", _FW + "gpt-oss-120b", ("fireworks", "gpt-oss-120b"), "gpt-oss-120b"),
    RowSpec("fireworks/gpt-oss-20b", _FW + "gpt-oss-20b", ("fireworks", "gpt-oss-20b"), "gpt-oss-20b"),
    # Current open-weight families (Qwen3, DeepSeek-R1/V3.1); LiteLLM 1.110.2 keys
    RowSpec("deepinfra/qwen3-235b-a22b", "deepinfra/Qwen/Qwen3-235B-A22B-Instruct-2507", None, "qwen3-235b-a22b",
            notes="the 2507 Instruct checkpoint of Qwen3-235B-A22B; not compared with Lava's gateway table, which "
                  "lists Qwen/Qwen3-235B-A22B (the original checkpoint, $0.13/$0.60) and not the 2507 Instruct row "
                  "priced here"),
    RowSpec("fireworks/qwen3-235b-a22b", _FW + "qwen3-235b-a22b-instruct-2507", None, "qwen3-235b-a22b",
            notes="the 2507 Instruct checkpoint of Qwen3-235B-A22B"),
    RowSpec("deepinfra/qwen3-32b", "deepinfra/Qwen/Qwen3-32B", None, "qwen3-32b",
            crosscheck_page=PricePage(_LAVA_DEEPINFRA, 0.10, 0.30, own=False, note="Qwen/Qwen3-32B")),
    RowSpec("deepinfra/deepseek-r1", "deepinfra/deepseek-ai/DeepSeek-R1-0528", None, "deepseek-r1",
            notes="the 0528 checkpoint of DeepSeek-R1",
            crosscheck_page=PricePage(_LAVA_DEEPINFRA, 0.50, 2.15, own=False, note="deepseek-ai/DeepSeek-R1-0528")),
    RowSpec("together/deepseek-r1", "together_ai/deepseek-ai/DeepSeek-R1-0528", None, "deepseek-r1",
            notes="the 0528 checkpoint of DeepSeek-R1"),
    RowSpec("fireworks/deepseek-r1", _FW + "deepseek-r1-0528", None, "deepseek-r1",
            notes="the 0528 checkpoint of DeepSeek-R1"),
    # DeepInfra (not in genai-prices)
    RowSpec("deepinfra/llama-3.3-70b", "deepinfra/meta-llama/Llama-3.3-70B-Instruct", None, "llama-3.3-70b",
            crosscheck_page=PricePage(_LAVA_DEEPINFRA, 0.23, 0.40, own=False, note="meta-llama/Llama-3.3-70B-Instruct")),
    RowSpec("deepinfra/llama-3.1-8b", "deepinfra/meta-llama/Meta-Llama-3.1-8B-Instruct", None, "llama-3.1-8b"),
    RowSpec("deepinfra/llama-3.1-70b", "deepinfra/meta-llama/Meta-Llama-3.1-70B-Instruct", None, "llama-3.1-70b",
            notes=_KEPT.format(price="$0.40") + "; Lava's gateway table lists $0.23 for this model and $0.10/$0.28 "
                  "for the -Turbo variant (read 2026-12-02); the hundredthrun/gpu-cloud-prices dataset on Hugging "
                  "Face, transcribing deepinfra.com/pricing on 2026-11-05, lists 'Llama 3.1 70B Instruct Turbo' at "
                  "$0.40/$0.40",
            crosscheck_page=PricePage(_LAVA_DEEPINFRA, 0.23, 0.40, own=False,
                                      note="meta-llama/Meta-Llama-3.1-70B-Instruct")),
    RowSpec("deepinfra/mixtral-8x7b", "deepinfra/mistralai/Mixtral-8x7B-Instruct-v0.1", None, "mixtral-8x7b"),
    RowSpec("deepinfra/qwen2.5-72b", "deepinfra/Qwen/Qwen2.5-72B-Instruct", None, "qwen2.5-72b",
            notes=_KEPT.format(price="$0.36") + "; Lava's gateway table lists $0.12 (a third of it) and $0.39 "
                  "output (read 2026-12-02), so the input may be 3x lower",
            crosscheck_page=PricePage(_LAVA_DEEPINFRA, 0.12, 0.39, own=False, note="Qwen/Qwen2.5-72B-Instruct")),
    RowSpec("deepinfra/qwen2.5-7b", "deepinfra/Qwen/Qwen2.5-7B-Instruct", None, "qwen2.5-7b"),
    RowSpec("deepinfra/deepseek-v3", "deepinfra/deepseek-ai/DeepSeek-V3", None, "deepseek-v3",
            notes=_KEPT.format(price="$0.32") + "; Lava's gateway table lists $0.38 (read 2026-12-02), so the "
                  "input may be up to 19% higher",
            crosscheck_page=PricePage(_LAVA_DEEPINFRA, 0.38, 0.89, own=False, note="deepseek-ai/DeepSeek-V3")),
    RowSpec("deepinfra/gpt-oss-120b", "deepinfra/openai/gpt-oss-120b", None, "gpt-oss-120b"),
    RowSpec("deepinfra/gpt-oss-20b", "deepinfra/openai/gpt-oss-20b", None, "gpt-oss-20b"),
    # Groq (its Llama rows are only in genai-prices)
    RowSpec("groq/gpt-oss-120b", "groq/openai/gpt-oss-120b", ("groq", "openai/gpt-oss-120b"), "gpt-oss-120b"),
    RowSpec("groq/gpt-oss-20b", "groq/openai/gpt-oss-20b", ("groq", "openai/gpt-oss-20b"), "gpt-oss-20b"),
    RowSpec("groq/llama-3.1-8b", None, ("groq", "llama-3.1-8b-instant"), "llama-3.1-8b"),
    RowSpec("groq/llama-3.3-70b", None, ("groq", "llama-3.3-70b-versatile"), "llama-3.3-70b"),
    # Llama 4, Gemma 3, Qwen3-30B-A3B: not in LiteLLM 1.110.2 or genai-prices 0.2.3 under these providers
    RowSpec("cerebras/llama-4-maverick", None, None, "llama-4-maverick",
            price_page=PricePage("https://inference-docs.cerebras.ai/models/llama-4-maverick", 0.20, 0.60,
                                 note="llama-4-maverick-17b-128e-instruct, exploration pricing"),
            notes="context 32k tokens on paid tiers (8k on the free tier), per the same page"),
    RowSpec("deepinfra/llama-4-maverick", None, None, "llama-4-maverick",
            price_page=PricePage(_LAVA_DEEPINFRA, 0.15, 0.60, own=False,
                                 note="meta-llama/Llama-4-Maverick-17B-128E-Instruct-FP8")),
    RowSpec("deepinfra/llama-4-scout", None, None, "llama-4-scout",
            price_page=PricePage(_LAVA_DEEPINFRA, 0.08, 0.30, own=False, note="meta-llama/Llama-4-Scout-17B-16E-Instruct")),
    RowSpec("deepinfra/gemma-3-27b", None, None, "gemma-3-27b",
            price_page=PricePage(_LAVA_DEEPINFRA, 0.10, 0.19, own=False, note="google/gemma-3-27b-it")),
    RowSpec("gmicloud/llama-4-maverick", None, None, "llama-4-maverick",
            price_page=PricePage(_LAVA_GMI, 0.25, 0.80, own=False, note="meta-llama/Llama-4-Maverick-17B-128E-Instruct-FP8")),
    RowSpec("gmicloud/qwen3-235b-a22b", None, None, "qwen3-235b-a22b",
            price_page=PricePage(_LAVA_GMI, 0.17, 1.09, own=False, note="Qwen/Qwen3-235B-A22B-FP8")),
    RowSpec("gmicloud/qwen3-32b", None, None, "qwen3-32b",
            price_page=PricePage(_LAVA_GMI, 0.10, 0.60, own=False, note="Qwen/Qwen3-32B-FP8")),
    RowSpec("inferencenet/qwen3-30b-a3b", None, None, "qwen3-30b-a3b",
            price_page=PricePage(_LAVA_INFERENCE, 0.08, 0.29, own=False, note="qwen/qwen3-30b-a3b/fp8")),
    RowSpec("inferencenet/gemma-3-27b", None, None, "gemma-3-27b",
            price_page=PricePage(_LAVA_INFERENCE, 0.30, 0.40, own=False, note="google/gemma-3-27b-instruct/bf-16")),
    # SambaNova (not in LiteLLM or genai-prices at import)
    RowSpec("sambanova/deepseek-v3.1", None, None, "deepseek-v3.1",
            price_page=PricePage("https://cloud.sambanova.ai/plans/pricing", 3.0, 4.5, dt.date(2026, 10, 7),
                                 note="DeepSeek-V3.1, $3 in / $4.50 out per 1M tokens, as quoted verbatim from the page "
                                      "read 2026-10-07 in api-evangelist/sambanova-systems plans-pricing.yml")),
    # Cerebras, Nebius
    RowSpec("cerebras/llama-3.1-8b", "cerebras/llama-3.1-8b", ("cerebras", "llama3.1-8b"), "llama-3.1-8b"),
    RowSpec("cerebras/llama-3.3-70b", "cerebras/llama-3.3-70b", ("cerebras", "llama-3.3-70b"), "llama-3.3-70b"),
    RowSpec("cerebras/gpt-oss-120b", "cerebras/gpt-oss-120b", ("cerebras", "gpt-oss-120b"), "gpt-oss-120b"),
    RowSpec("nebius/llama-3.3-70b", "nebius/meta-llama/Llama-3.3-70B-Instruct", None, "llama-3.3-70b"),
    RowSpec("nebius/llama-3.1-405b", "nebius/meta-llama/Meta-Llama-3.1-405B-Instruct", None, "llama-3.1-405b"),
)

# Fireworks' and Groq's published batch and cached-input discounts apply to every row of theirs that lacks the
# rate (the import keeps a rate LiteLLM or genai-prices already gives, e.g. Groq's gpt-oss cached input).
ROW_SPECS = tuple(
    spec._replace(discounts=_FW_DISCOUNTS) if spec.row_id.startswith("fireworks/")
    else spec._replace(discounts=_GROQ_BATCH) if spec.row_id.startswith("groq/")
    else spec
    for spec in ROW_SPECS
)
