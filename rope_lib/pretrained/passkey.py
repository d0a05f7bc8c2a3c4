"""Passkey retrieval (Mohtashami and Jaggi 2023, "Landmark Attention", arXiv:2305.16300).

A prompt of a given length in tokens hides one line in repeated filler:

    There is an important info hidden inside a lot of irrelevant text. Find it and
    memorize it. I will quiz you about the important information there.
    The grass is green. The sky is blue. The sun is yellow. Here we go. There and back
    again. (repeated) ... The pass key is 68048. Remember it. 68048 is the pass key. ...
    (repeated) ... What is the pass key? The pass key is

and the model must answer " 68048". The depth (0 to 1) is the share of the filler that comes
before the key. A 5-digit key is 6 tokens for SmolLM2 (a space, then one token per digit).

Judged as greedy decoding would, in one forward pass: run the prompt followed by the true
answer's tokens (all but the last) and take the argmax of the logits at each answer position.
The key counts as retrieved iff every argmax equals the true next token. That is exactly what
greedy decoding gives, token by token: as long as its choices match the answer, it is fed
the same tokens as this forward pass, so it makes the same choices; at the first mismatch
both fail. (tests/lib/test_pretrained.py checks this against greedy_decode, which decodes one
token at a time.) The forward pass costs one pass over the prompt instead of six.
"""

from __future__ import annotations

import random

import torch

from ..language import _

TASK = (
    "There is an important info hidden inside a lot of irrelevant text. Find it and "
    "memorize it. I will quiz you about the important information there."
)
FILLER = (
    " The grass is green. The sky is blue. The sun is yellow. Here we go. There and back "
    "again."
)
KEY_LINE = " The pass key is {key}. Remember it. {key} is the pass key."
QUESTION = " What is the pass key? The pass key is"


def passkey_prompt(
    tokenizer, length: int, depth: float, key: int
) -> tuple[torch.Tensor, torch.Tensor]:
    """(prompt ids, answer ids) with len(prompt) + len(answer) <= length, as close as
    whole filler sentences allow; the key after round(depth * fillers) of them.

    Each piece is tokenized on its own and the ids joined (every piece but the task starts
    with a space, so the joined ids are what the whole text tokenizes to).
    """
    if isinstance(key, bool) or not isinstance(key, int) or not 10_000 <= key <= 99_999:
        raise ValueError(_("key must be a 5-digit int, got {key!r}").format(key=key))
    if isinstance(depth, bool) or not isinstance(depth, (int, float)):
        raise TypeError(
            _("depth must be a number from 0 to 1, got {depth!r}").format(depth=depth)
        )
    if not 0 <= depth <= 1:
        raise ValueError(
            _("depth must be from 0 to 1, got {depth!r}").format(depth=depth)
        )

    def ids(text):
        return tokenizer(text, add_special_tokens=False)["input_ids"]

    task, filler, question = ids(TASK), ids(FILLER), ids(QUESTION)
    key_line, answer = ids(KEY_LINE.format(key=key)), ids(f" {key}")
    fixed = len(task) + len(key_line) + len(question) + len(answer)
    if isinstance(length, bool) or not isinstance(length, int):
        raise TypeError(
            _("length must be an int, got {length}").format(
                length=type(length).__name__
            )
        )
    if length < fixed + len(filler):
        raise ValueError(
            _("length must be at least {value} tokens, got {length}").format(
                value=fixed + len(filler), length=length
            )
        )
    fillers = (length - fixed) // len(filler)
    before = round(depth * fillers)
    prompt = task + filler * before + key_line + filler * (fillers - before) + question
    return torch.tensor(prompt), torch.tensor(answer)


def passkey_number(seed: str) -> int:
    """A 5-digit key from random.Random(seed): the same on every machine and Python (a
    string seed is hashed with SHA-512)."""
    if not isinstance(seed, str):
        raise TypeError(
            _("seed must be a str, got {seed}").format(seed=type(seed).__name__)
        )
    return random.Random(seed).randint(10_000, 99_999)


@torch.no_grad()
def greedy_answer(model, prompt: torch.Tensor, answer: torch.Tensor) -> torch.Tensor:
    """What greedy decoding after prompt would say for len(answer) tokens, up to and
    including its first token that differs from answer (see the module docstring): one
    forward pass over prompt + answer[:-1]. Retrieved iff the result equals answer."""
    for name, x in (("prompt", prompt), ("answer", answer)):
        if not isinstance(x, torch.Tensor) or x.dim() != 1 or len(x) < 1:
            raise ValueError(
                _("{name} must be a non-empty 1-D tensor of ids, got {x!r:.60}").format(
                    name=name, x=x
                )
            )
    tokens = torch.cat([prompt, answer[:-1]]).to(model.embedding.weight.device)
    h = model.hidden_states(tokens)[0, len(prompt) - 1 :]  # the answer positions only
    said = (h @ model.embedding.weight.T).argmax(-1).cpu()
    wrong = (said != answer).nonzero()
    return said if len(wrong) == 0 else said[: int(wrong[0]) + 1]


@torch.no_grad()
def greedy_decode(model, prompt: torch.Tensor, steps: int) -> torch.Tensor:
    """steps tokens of greedy decoding after prompt, one full forward pass per token
    (no key/value cache: short and slow, the reference greedy_answer is checked against)."""
    if isinstance(steps, bool) or not isinstance(steps, int) or steps < 1:
        raise ValueError(
            _("steps must be a positive int, got {steps!r}").format(steps=steps)
        )
    tokens = prompt
    for _step in range(steps):
        nxt = model(tokens)[0, -1].argmax()[None].to(tokens.device)
        tokens = torch.cat([tokens, nxt])
    return tokens[len(prompt) :]
