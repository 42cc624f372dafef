"""Turn a user's Hugging Face `config.json` into a catalog ModelSpec, or say what is missing.

Only decoder-only transformers with the layouts the roofline knows are accepted: Llama-style dense
(llama, mistral, qwen2, qwen3, gemma*), Mixtral-style MoE (Qwen3-MoE included), DeepSeek-V2/V3 (MLA + MoE)
and gpt-oss.
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from costmodel.catalog.loader import describe_validation_error
from costmodel.catalog.schema import ModelSpec
from costmodel.errors import CostmodelError
from costmodel.fileio import read_user_text
from costmodel.units import printable

SUPPORTED_MODEL_TYPES = {
    "llama", "mistral", "mixtral", "qwen2", "qwen3", "qwen3_moe", "gemma", "gemma2", "deepseek_v2", "deepseek_v3",
    "gpt_oss", "phi3", "granite", "olmo2",
}
MAX_NAME_CHARS = 200  # a display name in one table cell; `_name_or_path` can be any local path
REQUIRED = ("hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size", "vocab_size")
# Fields copied verbatim when present (the ModelSpec field names are the HF names).
COPIED = (
    *REQUIRED, "num_key_value_heads", "head_dim", "tie_word_embeddings", "max_position_embeddings",
    "sliding_window", "layer_types", "num_local_experts", "n_routed_experts", "num_experts_per_tok",
    "moe_intermediate_size", "n_shared_experts", "first_k_dense_replace", "kv_lora_rank", "q_lora_rank",
    "qk_rope_head_dim", "qk_nope_head_dim", "v_head_dim",
)
# Fields whose presence means a layout we do not model; naming them beats a silent wrong answer.
UNSUPPORTED_FIELDS = {
    "shared_expert_intermediate_size": "a shared expert of a different width (Qwen-MoE)",
    "num_experts": "Qwen-MoE style experts (rename to num_local_experts if the layout is Mixtral-like)",
    "ssm_cfg": "state-space layers (Mamba)",
    "is_encoder_decoder": "an encoder-decoder model",
}


def import_hf_config(
    config: dict[str, Any], *, model_id: str, source: str, as_of: dt.date | None = None
) -> ModelSpec:
    """Validate an HF config dict and build a ModelSpec with id `model_id`, `checked` = `as_of` (default today)."""
    model_type = config.get("model_type")
    if model_type is None:
        raise CostmodelError("config.json has no 'model_type'; is this a Hugging Face model config?")
    if model_type not in SUPPORTED_MODEL_TYPES:
        raise CostmodelError(
            f"config.json: model_type '{model_type}' is not supported; supported: {', '.join(sorted(SUPPORTED_MODEL_TYPES))}"
        )
    config = _qwen3_moe_as_mixtral(config)
    for field, what in UNSUPPORTED_FIELDS.items():
        if config.get(field):
            raise CostmodelError(f"config.json: field '{field}' describes {what}, which the roofline does not model")
    missing = [name for name in REQUIRED if name not in config]
    if missing:
        raise CostmodelError(f"config.json is missing required field(s): {', '.join(missing)}")
    fields = {name: config[name] for name in COPIED if config.get(name) is not None}
    if config.get("layer_types") and "sliding_attention" not in config["layer_types"]:
        fields.pop("sliding_window", None)
    if fields.get("layer_types"):
        fields["layer_types"] = [t if t in ("full_attention", "sliding_attention") else "full_attention" for t in fields["layer_types"]]
    data = {
        "id": model_id,
        "name": _display_name(config.get("_name_or_path"), model_id=model_id),
        "source": source,
        "checked": (as_of or dt.date.today()).isoformat(),
        **fields,
    }
    try:
        return ModelSpec.model_validate(data)
    except ValidationError as exc:
        raise CostmodelError(describe_validation_error(exc, where="config.json")) from exc


def _display_name(name_or_path: Any, *, model_id: str) -> str:
    """The config's `_name_or_path` without control or bidi characters (it is echoed), else the id."""
    if not isinstance(name_or_path, str):
        return model_id
    clean = printable(name_or_path).strip()[:MAX_NAME_CHARS]
    return clean or model_id


def _qwen3_moe_as_mixtral(config: dict[str, Any]) -> dict[str, Any]:
    """Qwen3-MoE names its routed experts `num_experts`; with no shared expert and every layer sparse
    (decoder_sparse_step 1, no mlp_only_layers) the layout is Mixtral's, so it maps to num_local_experts."""
    if config.get("model_type") != "qwen3_moe" or not config.get("num_experts"):
        return config
    if config.get("shared_expert_intermediate_size"):
        return config  # rejected by UNSUPPORTED_FIELDS with its reason
    if config.get("decoder_sparse_step", 1) != 1 or config.get("mlp_only_layers"):
        raise CostmodelError(
            "config.json: fields 'decoder_sparse_step'/'mlp_only_layers' make some layers dense between MoE layers, "
            "which the roofline does not model (it models MoE on every layer after first_k_dense_replace)"
        )
    mapped = {key: value for key, value in config.items() if key != "num_experts"}
    mapped["num_local_experts"] = config["num_experts"]
    return mapped


def import_hf_config_file(path: str | Path, *, model_id: str, as_of: dt.date | None = None) -> ModelSpec:
    """Read `config.json` from disk and import it."""
    file = Path(path)
    text = read_user_text(file, what="config file")
    try:
        config = json.loads(text)
    except RecursionError:
        raise CostmodelError(f"{file}: nested too deeply to be a config.json; fix the structure") from None
    except json.JSONDecodeError as exc:
        raise CostmodelError(f"{file}: not valid JSON (line {exc.lineno}: {exc.msg})") from exc
    if not isinstance(config, dict):
        raise CostmodelError(f"{file}: expected a JSON object")
    return import_hf_config(config, model_id=model_id, source=f"imported from {file.name}", as_of=as_of)
