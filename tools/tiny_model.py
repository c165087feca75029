"""Build a tiny random-weight Llama that a real vLLM serves offline, for tests and benchmarks.

    VLLM_PYTHON tools/tiny_model.py OUT_DIR

Run it with the Python of the vLLM venv (.ci/services/40-vllm.sh): it needs torch,
transformers and tokenizers. Nothing is downloaded. Same bytes on every build (fixed seeds,
a generated corpus, one training thread), so a cache keyed by this file's hash stays valid.

Why these sizes: vocabulary 32000 because inferbench's random prompts draw token ids from
[1000, 30000) and vLLM refuses an id outside the vocabulary; head_dim 32 because vLLM's CPU
attention has no kernel for 16; four heads of 32 in two layers keep a CPU step in the
millisecond range. The tokenizer is a byte-level BPE trained here on pseudo-words (so any
text encodes and any id decodes) with a chat template, so chat requests and the
tokenizer-based tools (lm-eval, `vllm bench serve`) work as with a real model.
"""

from __future__ import annotations

import json
import os
import random
import sys
from pathlib import Path

VOCAB = 32000
MAX_LEN = 4096
SPECIAL = ["<|begin|>", "<|end|>", "<|system|>", "<|user|>", "<|assistant|>", "<|pad|>"]
CHAT_TEMPLATE = (
    "{{ bos_token }}{% for m in messages %}<|{{ m['role'] }}|>\n{{ m['content'] }}<|end|>\n"
    "{% endfor %}{% if add_generation_prompt %}<|assistant|>\n{% endif %}"
)


def corpus(seed: int = 0, words: int = 400_000) -> list[str]:
    """Lines of pseudo-words, numbers and punctuation: enough distinct pairs for 32000 merges."""
    rng = random.Random(seed)
    onsets = [*"bcdfghjklmnprstvwz", "ch", "sh", "th", "st", "tr", "pl", "gr", "qu"]
    vowels = [*"aeiou", "ai", "ea", "ou", "io"]
    codas = ["", "", *"nrstlmk", "ng", "nd", "st"]
    lines, line = [], []
    for _ in range(words):
        kind = rng.random()
        if kind < 0.08:
            word = str(rng.randrange(0, 10 ** rng.randint(1, 4)))
        else:
            word = "".join(
                rng.choice(onsets) + rng.choice(vowels) + rng.choice(codas)
                for _ in range(rng.randint(1, 4))
            )
            if rng.random() < 0.1:
                word = word.capitalize()
        line.append(word + (rng.choice([",", ".", "?", ":"]) if rng.random() < 0.08 else ""))
        if len(line) >= 16:
            lines.append(" ".join(line))
            line = []
    return lines


def build_tokenizer(out: Path) -> None:
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.post_processor = processors.ByteLevel(trim_offsets=False)
    trainer = trainers.BpeTrainer(
        vocab_size=VOCAB,
        special_tokens=SPECIAL,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(corpus(), trainer=trainer)
    if tok.get_vocab_size() != VOCAB:
        raise SystemExit(f"tokenizer has {tok.get_vocab_size()} tokens, not {VOCAB}")
    tok.save(str(out / "tokenizer.json"))
    config = {
        "tokenizer_class": "PreTrainedTokenizerFast",
        "bos_token": "<|begin|>",
        "eos_token": "<|end|>",
        "pad_token": "<|pad|>",
        "add_bos_token": False,
        "model_max_length": MAX_LEN,
        "chat_template": CHAT_TEMPLATE,
        "clean_up_tokenization_spaces": False,
    }
    (out / "tokenizer_config.json").write_text(json.dumps(config, indent=2) + "\n")
    special = {"bos_token": "<|begin|>", "eos_token": "<|end|>", "pad_token": "<|pad|>"}
    (out / "special_tokens_map.json").write_text(json.dumps(special, indent=2) + "\n")


def build_model(out: Path) -> None:
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    ids = {name: SPECIAL.index(name) for name in ("<|begin|>", "<|end|>", "<|pad|>")}
    config = LlamaConfig(
        vocab_size=VOCAB,
        hidden_size=128,
        intermediate_size=256,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=4,
        head_dim=32,
        max_position_embeddings=MAX_LEN,
        bos_token_id=ids["<|begin|>"],
        eos_token_id=ids["<|end|>"],
        pad_token_id=ids["<|pad|>"],
        tie_word_embeddings=False,
        torch_dtype="bfloat16",
    )
    torch.manual_seed(0)
    model = LlamaForCausalLM(config).to(torch.bfloat16)
    model.save_pretrained(str(out), safe_serialization=True)


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    out = Path(argv[0])
    out.mkdir(parents=True, exist_ok=True)
    build_tokenizer(out)
    build_model(out)
    return 0


if __name__ == "__main__":
    # One training thread: the BPE merges then come out the same on every machine.
    os.environ.setdefault("RAYON_NUM_THREADS", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    sys.exit(main(sys.argv[1:]))
