"""A real pretrained LLM run by rope_lib: SmolLM2-135M-Instruct from its GGUF file.

model.py   Llama: RMSNorm, grouped-query attention through rope_lib.apply_rope with any
           rope_frequencies variant (or explicit frequencies), SwiGLU;
           Llama.from_gguf(layout=...); Window: StreamingLLM's sinks + recent keys
gguf.py    the file (smollm2_path), its hyper-parameters and float32 weights, the row order
           of W_q / W_k (qk_rows), the tokenizer; caches in ~/.cache/rope-notebooks/
text.py    real English with no download: Python's documentation (pydoc_data.topics)
passkey.py passkey retrieval prompts, judged as greedy decoding would in one forward pass
pairs.py   the size of q and k per frequency pair, the pairs' wavelengths
attention_maps.py  explicit attention weights, their decay with distance, attention sinks
experiment.py and `python -m rope_lib.pretrained`: loss per position past the training
           length, 2x and 4x (plain RoPE against zero-shot PI, NTK, dynamic NTK, YaRN, Llama 3),
           passkey retrieval, pairs, decay and sinks; results.json's schema
results.py reading a results folder (the one ROPE_LLM_RESULTS names): loss curves over
           windows, pair sizes, attention by distance, passkey rows
figures.py the figures of a results folder (`python -m rope_lib.pretrained.figures DIR`),
           and lesson 15's static figures
"""

from .gguf import LlamaConfig, load_tokenizer, load_weights, qk_rows, smollm2_path
from .model import Llama, Window
from .text import documentation_text, text_windows

__all__ = [
    "Llama",
    "LlamaConfig",
    "documentation_text",
    "load_tokenizer",
    "load_weights",
    "qk_rows",
    "smollm2_path",
    "text_windows",
    "Window",
]
