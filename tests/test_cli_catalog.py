"""`costmodel estimate / models / hardware` CLI contracts and the HF config importer."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
import yaml

from costmodel.catalog import loader
from costmodel.catalog.hf_import import import_hf_config
from costmodel.cli import main
from costmodel.errors import CostmodelError

ESTIMATE_KEYS = {
    "prefill_seconds", "decode_step_seconds", "ttft_seconds", "tpot_seconds", "decode_tokens_per_second",
    "weights_bytes", "kv_bytes_per_token", "max_batch", "fits", "prefill_bound", "decode_bound",
}


def run_cli(capsys, *argv):
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_estimate_json_contract(capsys):
    code, out, _ = run_cli(capsys, "estimate", "--model", "llama-3.1-8b", "--hardware", "h100-sxm", "--json")
    assert code == 0
    payload = json.loads(out)
    assert payload.keys() >= ESTIMATE_KEYS
    assert payload["kv_bytes_per_token"] == 131072
    assert payload["decode_bound"] in ("compute", "memory", "overhead")
    assert payload["fits"] is True


def test_estimate_table_is_readable(capsys):
    code, out, _ = run_cli(capsys, "estimate", "--model", "llama-3.1-70b", "--hardware", "h100-sxm", "--gpus", "4")
    assert code == 0
    assert "prefill" in out and "decode step" in out and "ms" in out and "KV" in out


def test_unknown_model_exit_2_with_suggestion(capsys):
    code, out, err = run_cli(capsys, "estimate", "--model", "llama-3.1-8x", "--hardware", "h100-sxm", "--json")
    assert code == 2 and out == ""
    assert "unknown model 'llama-3.1-8x'; did you mean 'llama-3.1-8b'?" in err


def test_bad_flag_value_exit_2(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["estimate", "--model", "llama-3.1-8b", "--hardware", "h100-sxm", "--batch", "many"])
    assert exc.value.code == 2
    code, _, err = run_cli(capsys, "estimate", "--model", "llama-3.1-8b", "--hardware", "h100-sxm", "--batch", "0")
    assert code == 2 and "--batch must be >= 1" in err


def test_models_and_hardware_list(capsys):
    code, out, _ = run_cli(capsys, "models", "list", "--json")
    ids = {row["id"] for row in json.loads(out)["models"]}
    assert {"llama-3.1-8b", "deepseek-v3", "gpt-oss-120b", "tiny-test"} <= ids
    code, out, _ = run_cli(capsys, "hardware", "list", "--json")
    ids = {row["id"] for row in json.loads(out)["hardware"]}
    assert {"h100-sxm", "h200", "b200", "a100-80gb", "l40s", "l4", "mi300x"} <= ids


def test_console_script_subprocess():
    proc = subprocess.run(
        [sys.executable, "-m", "costmodel", "estimate", "--model", "mistral-7b", "--hardware", "l4", "--json"],
        capture_output=True, text=True, check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["model"] == "mistral-7b"


QWEN_CONFIG = {
    "architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2", "hidden_size": 3584, "intermediate_size": 18944,
    "num_attention_heads": 28, "num_hidden_layers": 28, "num_key_value_heads": 4, "vocab_size": 152064,
    "tie_word_embeddings": False, "max_position_embeddings": 32768, "rope_theta": 1000000.0, "torch_dtype": "bfloat16",
}


def test_models_import_roundtrip(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("COSTMODEL_HOME", str(tmp_path / "home"))
    cfg = tmp_path / "my-qwen" / "config.json"
    cfg.parent.mkdir()
    cfg.write_text(json.dumps(QWEN_CONFIG))
    code, out, err = run_cli(capsys, "models", "import", str(cfg), "--json")
    assert code == 0, err
    payload = json.loads(out)
    assert payload["id"] == "my-qwen"
    # Same shapes as the bundled qwen2.5-7b: 7.6e9 params.
    assert payload["total_params"] == pytest.approx(7.615e9, rel=0.01)
    saved = yaml.safe_load((tmp_path / "home" / "models" / "my-qwen.yaml").read_text())
    assert saved["hidden_size"] == 3584
    loader._read_model_dir.cache_clear()
    code, out, _ = run_cli(capsys, "estimate", "--model", "my-qwen", "--hardware", "l40s", "--json")
    assert code == 0 and json.loads(out)["kv_bytes_per_token"] == 2 * 28 * 4 * 128 * 2
    # A second import refuses to overwrite.
    code, _, err = run_cli(capsys, "models", "import", str(cfg))
    assert code == 2 and "--force" in err


@pytest.mark.parametrize(
    ("mutate", "fragment"),
    [
        (lambda c: c.pop("hidden_size"), "missing required field(s): hidden_size"),
        (lambda c: c.update(model_type="t5"), "model_type 't5' is not supported"),
        (lambda c: c.pop("model_type"), "no 'model_type'"),
        (lambda c: c.update(num_key_value_heads=5), "num_key_value_heads"),
        (lambda c: c.update(shared_expert_intermediate_size=5632), "shared_expert_intermediate_size"),
        (lambda c: c.update(hidden_size=-1), "hidden_size"),
    ],
)
def test_import_rejects_with_field_names(mutate, fragment):
    cfg = dict(QWEN_CONFIG)
    mutate(cfg)
    with pytest.raises(CostmodelError, match=fragment.replace("(", r"\(").replace(")", r"\)")):
        import_hf_config(cfg, model_id="x", source="test")


def test_import_file_errors(tmp_path, capsys):
    bad = tmp_path / "config.json"
    bad.write_text("{not json")
    code, _, err = run_cli(capsys, "models", "import", str(bad), "--id", "x")
    assert code == 2 and "not valid JSON" in err
    code, _, err = run_cli(capsys, "models", "import", str(tmp_path / "missing.json"), "--id", "x")
    assert code == 2 and "cannot read" in err


def test_bad_catalog_files_name_file_row_field(tmp_path):
    model = tmp_path / "broken.yaml"
    model.write_text("id: broken\nname: b\nsource: s\nchecked: 2026-11-29\nhidden_size: -4\nnum_hidden_layers: 2\n"
                     "num_attention_heads: 2\nintermediate_size: 8\nvocab_size: 10\nflux_capacitor: 1\n")
    with pytest.raises(CostmodelError) as exc:
        loader.parse_model_file(model)
    text = str(exc.value)
    assert str(model) in text and "hidden_size" in text and "flux_capacitor" in text
    wrong_name = tmp_path / "other.yaml"
    wrong_name.write_text(model.read_text().replace("hidden_size: -4", "hidden_size: 4").replace("flux_capacitor: 1\n", ""))
    with pytest.raises(CostmodelError, match="file is named 'other.yaml'"):
        loader.parse_model_file(wrong_name)
    rows = yaml.safe_load(loader.ACCELERATORS_FILE.read_text())
    rows["accelerators"][2]["hbm_bytes_per_s"] = "fast"
    acc = tmp_path / "acc.yaml"
    acc.write_text(yaml.safe_dump(rows))
    with pytest.raises(CostmodelError) as exc:
        loader.parse_accelerator_file(acc)
    assert "row 3" in str(exc.value) and "hbm_bytes_per_s" in str(exc.value)
    syntax = tmp_path / "syntax.yaml"
    syntax.write_text("accelerators: [\n")
    with pytest.raises(CostmodelError, match="not valid YAML"):
        loader.parse_accelerator_file(syntax)


def test_bad_calibration_file_names_file_and_field(tmp_path, capsys):
    missing = tmp_path / "none.json"
    code, _, err = run_cli(capsys, "estimate", "--model", "tiny-test", "--hardware", "cpu", "--calibration", str(missing))
    assert code == 2 and "calibration" in err and "cannot read" in err
    broken = tmp_path / "cal.json"
    broken.write_text(json.dumps({"hardware_id": "cpu", "eff_compute": -1}))
    code, _, err = run_cli(capsys, "estimate", "--model", "tiny-test", "--hardware", "cpu", "--calibration", str(broken))
    assert code == 2 and str(broken) in err and "eff_compute" in err


# Qwen/Qwen3-30B-A3B config.json (the fields the importer reads), as published (Qwen3MoeForCausalLM).
QWEN3_MOE_CONFIG = {
    "architectures": ["Qwen3MoeForCausalLM"], "model_type": "qwen3_moe", "hidden_size": 2048,
    "intermediate_size": 6144, "moe_intermediate_size": 768, "num_experts": 128, "num_experts_per_tok": 8,
    "decoder_sparse_step": 1, "mlp_only_layers": [], "num_hidden_layers": 48, "num_attention_heads": 32,
    "num_key_value_heads": 4, "head_dim": 128, "vocab_size": 151936, "tie_word_embeddings": False,
    "max_position_embeddings": 40960, "sliding_window": None, "use_sliding_window": False,
}  # fmt: skip


def test_qwen3_moe_import_matches_the_bundled_model():
    spec = import_hf_config(dict(QWEN3_MOE_CONFIG), model_id="my-qwen3-moe", source="test")
    bundled = loader.bundled_models()["qwen3-30b-a3b"]
    fields = ("hidden_size", "num_hidden_layers", "num_attention_heads", "num_key_value_heads", "head_dim",
              "intermediate_size", "moe_intermediate_size", "num_local_experts", "num_experts_per_tok", "vocab_size")  # fmt: skip
    assert {f: getattr(spec, f) for f in fields} == {f: getattr(bundled, f) for f in fields}
    assert spec.experts == 128 and spec.n_shared_experts is None


@pytest.mark.parametrize("mutate", [lambda c: c.update(decoder_sparse_step=2), lambda c: c.update(mlp_only_layers=[0])])
def test_qwen3_moe_with_dense_layers_between_is_refused(mutate):
    cfg = dict(QWEN3_MOE_CONFIG)
    mutate(cfg)
    with pytest.raises(CostmodelError, match="decoder_sparse_step"):
        import_hf_config(cfg, model_id="x", source="test")
