"""Men et al.'s base bound read as a scale, not a threshold (lesson 13, section 6), and the
per-layer lines of lesson 13 in both languages.

At 32k tokens (d = 128) the bases that keep B(m) = sum_i cos(m theta_i) >= 0 on [0, L]
come in narrow windows just above the first passing base: the bases Llama 2 Long (5e5) and
Qwen (1e6) chose fail, and so does Men et al.'s own table value 6.4e5; only from about 3x
the bound does every base pass."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rope_lib import set_language
from rope_lib.extension_analysis import base_pass_scan, first_negative_offset
from rope_lib.models import describe_layers, model_layers, model_summary


@pytest.fixture(scope="module")
def scan_32k():
    return base_pass_scan(32768, 128, decades=0.6)


def test_the_pass_set_is_fragmented_above_the_bound(scan_32k):
    scan = scan_32k
    passes = scan["passes"]
    assert scan["bound"] == pytest.approx(10**5.8)
    assert bool(passes[0]) and not bool(passes[1])  # the first window is one grid point
    # windows of passing bases, with failing ones between them, up to ~3x the bound
    switches = int((passes[1:] != passes[:-1]).sum())
    assert switches >= 10
    assert 0.3 < scan["share"] < 0.5
    assert 2.5 * scan["bound"] < scan["all_pass_from"] < 3.5 * scan["bound"]
    assert bool(passes[scan["bases"] >= scan["all_pass_from"]].all())
    # the bases the lesson names: Llama 2 Long's, Men et al.'s table value, Qwen's
    assert first_negative_offset(32768, 128, 5e5) == 18438
    assert first_negative_offset(32768, 128, 6.4e5) == 27685
    assert first_negative_offset(32768, 128, 1e6) == 27115
    assert first_negative_offset(32768, 128, 2e6) is None


def test_base_pass_scan_matches_one_by_one_checks():
    scan = base_pass_scan(4096, 128, points_per_decade=50, decades=0.5)
    for base, ok in zip(scan["bases"].tolist(), scan["passes"].tolist()):
        assert (first_negative_offset(4096, 128, base) is None) == ok
    assert scan["bases"][0] == scan["bound"]
    with pytest.raises(ValueError, match="decades"):
        base_pass_scan(4096, decades=0)


def test_describe_layers_speaks_chinese():
    gemma3 = model_layers("Gemma 3 4B")
    set_language("zh")
    try:
        lines = describe_layers(gemma3)
        llama4 = describe_layers(model_layers("Llama 4 Scout Instruct"))
    finally:
        set_language("en")
    assert (
        lines[0] == "第 0–4 层（滑动窗口）：default，底数 10000，旋转 256 维中的 256 维"
    )
    assert lines[1].startswith("第 5 层（全局）：linear，底数 1e+06")
    assert llama4[1] == "第 3 层（全局）：无位置编码（NoPE）"
    assert describe_layers(gemma3)[0] == (
        "layers 0-4 sliding_attention: default, base 10000, rotates 256 of 256"
    )


def test_model_summary_can_leave_the_nope_count_to_the_layers_column():
    name = "Llama 4 Scout Instruct"
    assert model_summary(name).endswith(" | NoPE 12/48 layers")
    assert "NoPE" not in model_summary(name, nope=False)


@settings(max_examples=40, deadline=None)
@given(
    length=st.integers(1, 3000),
    half=st.integers(1, 64),
    log_base=st.floats(1.0, 7.0),
)
def test_first_negative_offset_is_the_direct_sums_first_negative(
    length, half, log_base
):
    # the blocked angle-addition sums against B(m) summed cosine by cosine, numpy
    base = 10.0**log_base
    m = np.arange(length + 1, dtype=np.float64)[:, None]
    theta = base ** (-np.arange(0, 2 * half, 2, dtype=np.float64) / (2 * half))
    below = np.flatnonzero(np.cos(m * theta).sum(axis=1) < 0)
    want = int(below[0]) if below.size else None
    assert first_negative_offset(length, 2 * half, base) == want
