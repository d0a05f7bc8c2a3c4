"""Long real English with no download: Python's own documentation.

Every Python ships `pydoc_data.topics`, the text that help("assert"), help("with") ... print:
the language reference's sections (statements, expressions, the data model), about 465,000
characters, 113,000 tokens with SmolLM2's tokenizer. It is written by people, not generated
here, and licensed under the PSF License Agreement (Python Software Foundation License,
https://docs.python.org/3/license.html). Its text changes a little between Python versions,
so results.json records the version it was read from.
"""

from __future__ import annotations

import platform

import torch


def documentation_text() -> str:
    """The topics of pydoc_data.topics, in alphabetical order of their names, joined by a
    blank line (about 465,000 characters on Python 3.11)."""
    from pydoc_data.topics import topics

    return "\n\n".join(topics[name].strip() for name in sorted(topics))


def text_source() -> dict:
    """What documentation_text() was read from, for results files."""
    return {
        "text": "Python documentation, pydoc_data.topics",
        "licence": "PSF License Agreement (Python Software Foundation)",
        "python": platform.python_version(),
    }


def window_starts(tokens: int, span: int, count: int) -> list[int]:
    """Where count windows of span tokens begin in a text of `tokens` tokens: spread evenly
    from 0 to tokens - span (round(k (tokens - span) / (count - 1))), so that the first
    window opens the text and the last one closes it."""
    for name, value, least in (("span", span, 2), ("count", count, 1)):
        if isinstance(value, bool) or not isinstance(value, int) or value < least:
            raise ValueError(f"{name} must be an int >= {least}, got {value!r}")
    room = tokens - span
    if room < 0:
        raise ValueError(f"span must be at most the text's {tokens} tokens, got {span}")
    return [0] if count == 1 else [round(k * room / (count - 1)) for k in range(count)]


def text_windows(
    token_ids: torch.Tensor, length: int, count: int, span: int | None = None
) -> list[torch.Tensor]:
    """count windows of length tokens from token_ids [N], deterministic, beginning where
    windows of span tokens (default: length) would (window_starts): the first window opens
    the text; with span = length the last one closes it. Windows of several lengths with
    the same span begin at the same tokens: the shorter ones are the longer ones' first
    tokens. Windows overlap when count * span > N.
    """
    if not isinstance(token_ids, torch.Tensor) or token_ids.dim() != 1:
        raise TypeError(f"token_ids must be a 1-D torch.Tensor, got {token_ids!r:.60}")
    if isinstance(length, bool) or not isinstance(length, int) or length < 2:
        raise ValueError(f"length must be an int >= 2, got {length!r}")
    if length > len(token_ids):
        raise ValueError(
            f"length must be at most len(token_ids) = {len(token_ids)}, got {length}"
        )
    span = length if span is None else span
    if isinstance(span, bool) or not isinstance(span, int) or span < length:
        raise ValueError(f"span must be an int >= length = {length}, got {span!r}")
    starts = window_starts(len(token_ids), span, count)
    return [token_ids[s : s + length] for s in starts]


def documentation_tokens(tokenizer) -> torch.Tensor:
    """documentation_text() as token ids [N] (int64), no special tokens added."""
    ids = tokenizer(documentation_text(), add_special_tokens=False)["input_ids"]
    return torch.tensor(ids, dtype=torch.int64)
