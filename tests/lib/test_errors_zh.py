"""rope_lib's error messages speak the learner's language: after set_language("zh") a wrong
input gets a ValueError/TypeError in Chinese that still names the argument (and the value
that came), while the English messages stay exactly as they were (tests/lib/test_errors.py,
test_adversarial.py and the others match them).

- representative wrong inputs to the public API: Chinese, the argument's name, the value;
- every case of the English error tests (test_errors, test_multimodal, test_vision_rope,
  test_configs) again under "zh": Chinese, and the name they look for;
- test_adversarial's sweep (every public function, every argument, generated bad values)
  under "zh": no message is entirely English;
- the library's source: every raise in a learner-facing module goes through `_`, and the
  modules left in English are listed with the reason.
"""

from __future__ import annotations

import ast
import re
import warnings
from pathlib import Path

import pytest
import test_adversarial
import test_configs
import test_errors
import test_multimodal
import test_vision
import torch
from hypothesis import HealthCheck, given, settings

import rope_lib
from rope_lib import multimodal, vision
from rope_lib.language import get_language, language
from rope_lib.sinusoidal import LearnedPositionEmbedding

CJK = re.compile(r"[\u4e00-\u9fff]")
LIBRARY = Path(rope_lib.__file__).parent

x = torch.randn(2, 4, 6, 8)
p = torch.arange(6)


def _zh_error(call) -> str:
    """The message of the ValueError/TypeError that call() raises under "zh"."""
    with language("zh"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises((ValueError, TypeError)) as info:
            call()
    assert get_language() == "en"
    return str(info.value)


# (what, call, the argument's name, the value that came, as the message shows it)
REPRESENTATIVE = [
    ("odd d_model", lambda: rope_lib.sinusoidal_encoding(4, 63), "d_model", "63"),
    ("zero seq_len", lambda: rope_lib.sinusoidal_encoding(0, 4), "seq_len", "0"),
    ("float base", lambda: rope_lib.inv_frequencies(8, "10"), "base", "'10'"),
    (
        "x a list",
        lambda: rope_lib.apply_rope([[1.0, 2.0]], torch.arange(1)),
        "x",
        "[[1.0, 2.0]]",
    ),
    (
        "integer x",
        lambda: rope_lib.apply_rope(torch.ones(3, 4, dtype=torch.int64), p[:3]),
        "x",
        "torch.int64",
    ),
    (
        "odd head_dim",
        lambda: rope_lib.apply_rope(torch.randn(6, 7), p),
        "head_dim",
        "7",
    ),
    ("positions too long", lambda: rope_lib.apply_rope(x, p[:5]), "positions", "(5,)"),
    (
        "NaN positions",
        lambda: rope_lib.apply_rope(x, torch.full((6,), float("nan"))),
        "positions",
        "nan",
    ),
    (
        "unknown layout",
        lambda: rope_lib.apply_rope(x, p, layout="neox"),
        "layout",
        "'neox'",
    ),
    (
        "inv_freq wrong shape",
        lambda: rope_lib.apply_rope(x, p, inv_freq=torch.ones(3)),
        "inv_freq",
        "(3,)",
    ),
    (
        "negative attention_factor",
        lambda: rope_lib.apply_rope(x, p, attention_factor=-1.0),
        "attention_factor",
        "-1.0",
    ),
    (
        "RotaryEmbedding odd head_dim",
        lambda: rope_lib.RotaryEmbedding(9),
        "head_dim",
        "9",
    ),
    (
        "RotaryEmbedding x of another width",
        lambda: rope_lib.RotaryEmbedding(8)(torch.randn(2, 5, 6), torch.arange(5)),
        "head_dim",
        "6",
    ),
    (
        "learned table too short",
        lambda: LearnedPositionEmbedding(16, 8)(torch.randn(1, 17, 8)),
        "max_len",
        "17",
    ),
    (
        "learned positions not integers",
        lambda: LearnedPositionEmbedding(16, 8)(torch.randn(1, 4, 8), torch.rand(4)),
        "positions",
        "torch.float32",
    ),
    ("n_heads zero", lambda: rope_lib.alibi_slopes(0), "n_heads", "0"),
    ("causal a string", lambda: rope_lib.alibi_bias(4, 2, "yes"), "causal", "'yes'"),
    (
        "unknown rope_type",
        lambda: rope_lib.rope_frequencies("stretch", 16),
        "rope_type",
        "'stretch'",
    ),
    (
        "missing factor",
        lambda: rope_lib.rope_frequencies("linear", 16),
        "factor",
        "'linear'",
    ),
    (
        "factor <= 0",
        lambda: rope_lib.rope_frequencies("linear", 16, factor=-2.0),
        "factor",
        "-2.0",
    ),
    (
        "unknown parameter",
        lambda: rope_lib.rope_frequencies("linear", 16, factr=2.0),
        "factr",
        "'factor'",
    ),
    (
        "mrope_section not adding up",
        lambda: rope_lib.apply_mrope(torch.randn(4, 16), torch.zeros(3, 4), [2, 3, 2]),
        "mrope_section",
        "[2, 3, 2]",
    ),
    (
        "a segment that is no grid",
        lambda: multimodal.mrope_position_ids([3, "image"]),
        "segments[1]",
        "'image'",
    ),
    (
        "vision head_dim not a multiple of 4",
        lambda: rope_lib.apply_2d_rope(
            torch.randn(6, 18), vision.patch_positions(2, 3)
        ),
        "head_dim",
        "18",
    ),
    (
        "vision convention",
        lambda: vision.patch_positions(2, 3, "rope2d"),
        "convention",
        "'rope2d'",
    ),
]


@pytest.mark.parametrize(
    "what,call,name,value", REPRESENTATIVE, ids=[c[0] for c in REPRESENTATIVE]
)
def test_wrong_input_is_refused_in_chinese_naming_argument_and_value(
    what, call, name, value
):
    message = _zh_error(call)
    assert CJK.search(message), message
    assert name in message, message
    assert value in message, message


def test_the_messages_the_chinese_lessons_show():
    assert _zh_error(lambda: rope_lib.sinusoidal_encoding(4, 63)) == (
        "d_model 必须是偶数（维度是成对旋转的），实际是 63"
    )
    message = _zh_error(lambda: LearnedPositionEmbedding(16, 8)(torch.randn(1, 17, 8)))
    assert message.startswith("x.shape[-2]（seq）必须 <= max_len = 16，"), message
    assert message.endswith("实际是 17"), message


def test_english_messages_are_unchanged_before_and_after_chinese():
    def english():
        with pytest.raises(ValueError) as info:
            rope_lib.sinusoidal_encoding(4, 63)
        return str(info.value)

    want = "d_model must be even (dimensions are rotated in pairs), got 63"
    assert english() == want
    _zh_error(lambda: rope_lib.sinusoidal_encoding(4, 63))
    assert english() == want
    with pytest.raises(TypeError) as info:
        rope_lib.apply_rope("x", p)
    assert str(info.value) == "x must be a torch.Tensor, got str ('x')"
    with pytest.raises(TypeError) as info:
        rope_lib.apply_rope(torch.ones(2, 4, dtype=torch.int64), p[:2])
    assert str(info.value) == "x must have a floating-point dtype, got torch.int64"


def _parametrized(test) -> list[tuple]:
    """The (call, name) cases of an English test's @pytest.mark.parametrize."""
    (mark,) = [m for m in test.pytestmark if m.name == "parametrize"]
    return list(mark.args[1])


ENGLISH_CASES = (
    [(f"test_errors: {c[0]}", c[1], c[3]) for c in test_errors.CASES]
    + [
        (f"test_multimodal {k}", call, name)
        for k, (call, name) in enumerate(
            _parametrized(test_multimodal.test_wrong_input_names_the_argument)
        )
    ]
    + [
        (f"test_vision_rope {k}", call, name)
        for k, (call, name) in enumerate(
            _parametrized(test_vision.test_wrong_input_names_the_argument)
        )
    ]
    + [
        (f"test_configs {k}", lambda c=config: rope_lib.read_rope_config(c), name)
        for k, (config, name) in enumerate(
            _parametrized(test_configs.test_wrong_config_names_the_problem)
        )
    ]
)


@pytest.mark.parametrize(
    "what,call,name", ENGLISH_CASES, ids=[c[0] for c in ENGLISH_CASES]
)
def test_every_case_of_the_english_error_tests_is_chinese_too(what, call, name):
    message = _zh_error(call)
    assert CJK.search(message), message
    assert name in message, message


@pytest.mark.parametrize(
    "key",
    test_adversarial.WRONG_KEYS,
    ids=[f"{f}.{a}" for f, a in test_adversarial.WRONG_KEYS],
)
def test_no_refusal_of_the_adversarial_sweep_is_entirely_english(key):
    strategy, call = test_adversarial.WRONG[key]
    function, argument = key

    @settings(
        max_examples=10,
        deadline=None,
        derandomize=True,
        suppress_health_check=list(HealthCheck),
    )
    @given(strategy)
    def check(value):
        message = _zh_error(lambda: call(value))
        assert CJK.search(message), (key, value, message)
        assert test_adversarial._names_the_argument(message, function, argument), (
            key,
            value,
            message,
        )

    check()


#: Modules whose errors stay English, and why: no learner meets them in a lesson.
ENGLISH_ONLY = {
    # the language machinery itself: set_language's refusals come before any language is
    # set, and spaced_format / table's errors are about the course's own templates
    "language.py": "the language machinery",
    # lesson authors' layout limits for live figures (figsize, rows of controls)
    "widgets/display.py": "lesson authors' figure layout",
    # the real-LLM experiment run from the command line by maintainers
    # (python -m rope_lib.pretrained), and the internals it alone calls
    "pretrained/experiment.py": "maintainers' command line",
    "pretrained/attention_maps.py": "the experiment's internals",
    "pretrained/text.py": "the experiment's internals",
    "pretrained/figures.py": "stale results folders (maintainers)",
}

#: Exceptions raised only to be caught inside the library, or internal invariants.
INTERNAL = {
    ("exercises/lab.py", "KeyError"),  # caught and turned into a translated NotYet
    ("exercises/real_llm.py", "KeyError"),  # the same
    ("exercises/scaling_in_models.py", "AssertionError"),  # unreachable
    (
        "widgets/base.py",
        "TypeError",
    ),  # a lesson widget class without SWEPT (its author)
}


def _untranslated_raises(path: Path) -> list[str]:
    """Raise sites of `path` whose message does not go through `_` (gettext); a message
    made by a helper function (`_positions_misfit(...)`) is checked in that helper."""
    source = path.read_text(encoding="utf-8")
    relative = path.relative_to(LIBRARY).as_posix()
    found = []
    for node in ast.walk(ast.parse(source)):
        if not (isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call)):
            continue
        name = getattr(node.exc.func, "id", getattr(node.exc.func, "attr", ""))
        if not node.exc.args or not name.endswith(("Error", "Exception")):
            continue  # NotYet and the readers' exceptions: feedback, translated
        if (relative, name) in INTERNAL:
            continue
        message = node.exc.args[0]
        text = ast.get_source_segment(source, message)
        if isinstance(message, ast.Call) and "_(" not in text:
            if isinstance(message.func, ast.Name) and message.func.id != "_":
                continue  # a helper that builds the message
        if "_(" not in text:
            found.append(f"{relative}:{node.lineno}: {text[:70]}")
    return found


def test_every_learner_facing_raise_goes_through_gettext():
    problems = []
    for path in sorted(LIBRARY.rglob("*.py")):
        if path.relative_to(LIBRARY).as_posix() not in ENGLISH_ONLY:
            problems += _untranslated_raises(path)
    assert not problems, "\n".join(problems)


def test_the_english_only_modules_exist():
    for relative in ENGLISH_ONLY:
        assert (LIBRARY / relative).is_file(), relative
