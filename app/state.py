"""Session state: the scenario being edited, its shareable URL form, and values pages share.

The URL form is the scenario as compact JSON -> zlib -> urlsafe base64 (no padding) in one query
parameter `s`; decoding validates it with the scenario schema, so a link is as safe as a file.
"""

from __future__ import annotations

import base64
import binascii
import zlib
from dataclasses import dataclass
from typing import TypeVar

import streamlit as st
from pydantic import BaseModel

from costmodel.errors import CostmodelError

QUERY_PARAM = "s"
CALIBRATION_KEY = "calibration_json"
# A decoded link may not inflate past this (a zip bomb in a URL would otherwise eat the server's memory).
MAX_DECODED_BYTES = 4_000_000

_M = TypeVar("_M", bound=BaseModel)


def encode_token(model: BaseModel) -> str:
    """Compact JSON -> zlib (level 9) -> urlsafe base64 without '=' padding."""
    raw = model.model_dump_json(exclude_none=False).encode("utf-8")
    return base64.urlsafe_b64encode(zlib.compress(raw, 9)).decode("ascii").rstrip("=")


def decode_token(token: str, cls: type[_M]) -> _M:
    """Inverse of `encode_token`, validated by `cls`; a damaged link raises CostmodelError."""
    try:
        packed = base64.urlsafe_b64decode(token.strip() + "=" * (-len(token.strip()) % 4))
        inflater = zlib.decompressobj()
        raw = inflater.decompress(packed, MAX_DECODED_BYTES)
        if inflater.unconsumed_tail:
            raise CostmodelError(f"the link's scenario is larger than {MAX_DECODED_BYTES:,} bytes; share a file instead")
    except (binascii.Error, ValueError, zlib.error) as exc:
        if isinstance(exc, CostmodelError):
            raise
        raise CostmodelError(
            f"query parameter '{QUERY_PARAM}' is not a scenario link ({exc}); copy the whole link again"
        ) from None
    return cls.model_validate_json(raw)


@dataclass(frozen=True)
class RooflineDefaults:
    """Starting values of the Roofline page's widgets."""

    model: str = "llama-3.1-8b"
    hardware: str = "h100-sxm"
    gpus: int = 1
    weight_dtype: str = "bf16"
    kv_dtype: str = "bf16"
    batch: int = 16
    prompt_tokens: int = 1024
    output_tokens: int = 256


def roofline_defaults() -> RooflineDefaults:
    """Defaults for the Roofline page."""
    return RooflineDefaults()


def calibration_json_for(hardware_id: str) -> str | None:
    """The calibration applied on the Probes page, if it was measured on this accelerator."""
    payload = st.session_state.get(CALIBRATION_KEY)
    if not payload or payload.get("hardware_id") != hardware_id:
        return None
    return str(payload["json"])
