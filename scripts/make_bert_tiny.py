#!/usr/bin/env python3
"""Writes the browser tests' bert-tiny: BERT-tiny's shape (2 layers, hidden 128, 2 heads) with
random weights (seeded) and a tokenizer copied from a model folder, as `bertbench init --preset
tiny --tokenizer-from MODEL` writes it, but without building the engine first, so the page's
build can start while the native tests build.

    python3 scripts/make_bert_tiny.py public/models/all-MiniLM-L6-v2 public/models/bert-tiny [REFERENCE.json]

With REFERENCE.json, also writes what `transformers` computes for the browser test sentences
(`{text: mean-pooled last hidden state}`), the reference of the WebGPU test on this checkpoint.

Needs torch, transformers and safetensors.
"""
import json
import os
import shutil
import sys

import torch
from safetensors.torch import save_file
from transformers import AutoTokenizer, BertConfig, BertModel

# The sentences the browser tests embed with bert-tiny.
TEXTS = ["A tiny model for fast tests."]


def main():
    source, out = sys.argv[1], sys.argv[2]
    vocab_size = json.load(open(os.path.join(source, "config.json")))["vocab_size"]
    config = BertConfig(vocab_size=vocab_size, hidden_size=128, num_hidden_layers=2, num_attention_heads=2,
                        intermediate_size=512, max_position_embeddings=512, type_vocab_size=2)
    torch.manual_seed(0)
    model = BertModel(config).eval()
    os.makedirs(out, exist_ok=True)
    config.architectures = ["BertModel"]
    config.to_json_file(os.path.join(out, "config.json"))
    weights = os.path.join(out, "model.safetensors")
    save_file({k: v.contiguous() for k, v in model.state_dict().items()}, weights, metadata={"format": "pt"})
    os.chmod(weights, 0o644)  # served as it is: readable by a web server running as anyone
    shutil.copy(os.path.join(source, "tokenizer.json"), os.path.join(out, "tokenizer.json"))
    params = sum(p.numel() for p in model.parameters())
    print(f"bert-tiny: {params} parameters, random weights (seed 0), written to {out}")
    if len(sys.argv) > 3:
        tok = AutoTokenizer.from_pretrained(out)
        reference = {}
        for text in TEXTS:
            enc = tok(text, return_tensors="pt")
            with torch.no_grad():
                hidden = model(**enc).last_hidden_state[0]
            mask = enc["attention_mask"][0].unsqueeze(-1).to(hidden.dtype)
            reference[text] = ((hidden * mask).sum(0) / mask.sum()).tolist()
        os.makedirs(os.path.dirname(os.path.abspath(sys.argv[3])), exist_ok=True)
        with open(sys.argv[3], "w") as f:
            json.dump(reference, f)
        print(f"bert-tiny: transformers' mean-pooled vectors of {len(TEXTS)} sentence(s) written to {sys.argv[3]}")


if __name__ == "__main__":
    main()
