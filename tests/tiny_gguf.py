"""Write a small random-weight Llama GGUF that llama.cpp loads, for the real-server endpoint test.

Shapes: 4 layers, model width 512, 8 attention heads of 64 (2 KV heads), SwiGLU width 1408, f32
weights: 12M parameters, a 48 MB file. Small enough to write in a second, large enough that a decode
step (reading 48 MB) takes ~20 ms on one core, well above the ~1 ms of Python work per streamed token
and the few-ms scheduling gaps of a shared host (a 64-wide model streamed tokens in bursts, its TPOT
was scheduler noise).
Tokenizer: a SentencePiece ("llama") vocabulary written into the GGUF metadata, as llama.cpp reads it
(`tokenizer.ggml.*`, see gguf-py's `GGUFWriter.add_token_list/add_token_scores/add_token_types`): <unk>,
<s>, </s>, the 256 byte-fallback pieces <0x00>..<0xFF>, single characters, and every word of the
probe's synthetic prompt with its leading "▁" (so N prompt words are N prompt tokens, as the probe
assumes).

Generation never ends early and every token streams text: the output matrix gives every token except
the "▁..." pieces a very negative logit, through one residual dimension that is always large. Every
token embedding has 1.0 in dimension 0 (the rest ~ N(0, 0.02)), and the attention output and MLP down
projections write nothing into dimension 0, so after the final RMSNorm that dimension is about
1 / rms = 1 / sqrt((1 + 511 x 0.02^2) / 512), about 20.6, at every position. "▁..." rows of the output
matrix have 0 there, the other rows -100 (logit about -2,000). The random model then samples only
word pieces, never </s>, so each request streams exactly max_tokens content chunks.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

LAYERS = 4
WIDTH = 512
HEADS = 8
KV_HEADS = 2
HEAD_DIM = WIDTH // HEADS
FFN_WIDTH = 1408
CONTEXT_TOKENS = 2048
WEIGHT_STD = 0.02
SPACE = "\u2581"  # SentencePiece's word-boundary mark
NEVER_LOGIT_WEIGHT = -100.0
# gguf TokenType values (gguf-py constants.TokenType): NORMAL 1, UNKNOWN 2, CONTROL 3, BYTE 6
NORMAL, UNKNOWN, CONTROL, BYTE = 1, 2, 3, 6


def vocabulary(words: list[str]) -> tuple[list[str], list[float], list[int]]:
    """Pieces, SentencePiece scores and token types.

    llama.cpp's SentencePiece tokenizer starts from single characters and merges neighbours whose
    concatenation is a piece, so each word comes with every prefix ("▁t", "▁ti", "▁tim", "▁time"):
    one merge path, ending in the whole word as one token.
    """
    pieces = ["<unk>", "<s>", "</s>"] + [f"<0x{b:02X}>" for b in range(256)]
    types = [UNKNOWN, CONTROL, CONTROL] + [BYTE] * 256
    chars = sorted({c for w in words for c in w} | set("abcdefghijklmnopqrstuvwxyz.,") | {SPACE})
    prefixes = sorted({SPACE + w[:k] for w in words for k in range(1, len(w) + 1)})
    pieces += chars + prefixes
    types += [NORMAL] * (len(chars) + len(prefixes))
    scores = [0.0] * (len(pieces) - len(prefixes)) + [-1.0] * len(prefixes)
    return pieces, scores, types


def _random(rng: np.random.Generator, *shape: int) -> np.ndarray:
    return (rng.standard_normal(shape) * WEIGHT_STD).astype(np.float32)


def _no_write_to_dim0(matrix: np.ndarray) -> np.ndarray:
    matrix[0, :] = 0.0  # rows are output features: nothing is added to residual dimension 0
    return matrix


def tensors(*, vocab_size: int, sampled: np.ndarray, seed: int) -> dict[str, np.ndarray]:
    """Every tensor llama.cpp's llama architecture needs, numpy shape (out features, in features)."""
    rng = np.random.default_rng(seed)
    embedding = _random(rng, vocab_size, WIDTH)
    embedding[:, 0] = 1.0
    output = rng.standard_normal((vocab_size, WIDTH)).astype(np.float32)
    output[:, 0] = np.where(sampled, 0.0, NEVER_LOGIT_WEIGHT)
    result = {"token_embd.weight": embedding, "output_norm.weight": np.ones(WIDTH, np.float32),
              "output.weight": output}
    for layer in range(LAYERS):
        prefix = f"blk.{layer}."
        result.update({
            prefix + "attn_norm.weight": np.ones(WIDTH, np.float32),
            prefix + "attn_q.weight": _random(rng, WIDTH, WIDTH),
            prefix + "attn_k.weight": _random(rng, KV_HEADS * HEAD_DIM, WIDTH),
            prefix + "attn_v.weight": _random(rng, KV_HEADS * HEAD_DIM, WIDTH),
            prefix + "attn_output.weight": _no_write_to_dim0(_random(rng, WIDTH, WIDTH)),
            prefix + "ffn_norm.weight": np.ones(WIDTH, np.float32),
            prefix + "ffn_gate.weight": _random(rng, FFN_WIDTH, WIDTH),
            prefix + "ffn_up.weight": _random(rng, FFN_WIDTH, WIDTH),
            prefix + "ffn_down.weight": _no_write_to_dim0(_random(rng, WIDTH, FFN_WIDTH)),
        })
    return result


def write_tiny_llama(path: Path, *, words: list[str], seed: int = 0) -> int:
    """Write the GGUF to `path`; returns the vocabulary size."""
    import gguf  # the `realserver` extra; imported here so the module imports without it

    pieces, scores, types = vocabulary(words)
    sampled = np.array([p.startswith(SPACE) and len(p) > 1 for p in pieces])
    writer = gguf.GGUFWriter(str(path), "llama")
    writer.add_name("costmodel-tiny-random-llama")
    writer.add_context_length(CONTEXT_TOKENS)
    writer.add_embedding_length(WIDTH)
    writer.add_block_count(LAYERS)
    writer.add_feed_forward_length(FFN_WIDTH)
    writer.add_head_count(HEADS)
    writer.add_head_count_kv(KV_HEADS)
    writer.add_rope_dimension_count(HEAD_DIM)
    writer.add_layer_norm_rms_eps(1e-5)
    writer.add_vocab_size(len(pieces))
    writer.add_tokenizer_model("llama")
    writer.add_token_list(pieces)
    writer.add_token_scores(scores)
    writer.add_token_types(types)
    writer.add_unk_token_id(0)
    writer.add_bos_token_id(1)
    writer.add_eos_token_id(2)
    writer.add_add_bos_token(True)
    writer.add_add_eos_token(False)
    for name, array in tensors(vocab_size=len(pieces), sampled=sampled, seed=seed).items():
        writer.add_tensor(name, array)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return len(pieces)
