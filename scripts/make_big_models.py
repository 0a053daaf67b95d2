#!/usr/bin/env python3
"""Random-weight BERT-base and BERT-large folders with their MLM heads (BertForMaskedLM), for
measuring what the page does with a model of that size (bench/open_big_model.mjs). The
tokenizer is the default model's (the same 30,522-piece uncased vocabulary).

    python3 scripts/make_big_models.py OUT      # writes OUT/bert-base (438 MB), OUT/bert-large (1.34 GB)
"""
import os
import shutil
import sys

import torch
from transformers import BertConfig, BertForMaskedLM

SIZES = {
    "bert-base": {},
    "bert-large": dict(hidden_size=1024, num_hidden_layers=24, num_attention_heads=16, intermediate_size=4096),
}


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "/tmp/bertbench-big"
    src = os.path.join(os.path.dirname(__file__), "..", "public", "models", "all-MiniLM-L6-v2")
    for name, size in SIZES.items():
        folder = os.path.join(out, name)
        os.makedirs(folder, exist_ok=True)
        torch.manual_seed(0)
        model = BertForMaskedLM(BertConfig(**size))
        model.save_pretrained(folder)
        for f in ("tokenizer.json", "vocab.txt"):
            if os.path.exists(os.path.join(src, f)):
                shutil.copy(os.path.join(src, f), folder)
        print(name, sum(p.numel() for p in model.parameters()), "parameters,",
              os.path.getsize(os.path.join(folder, "model.safetensors")), "bytes")


if __name__ == "__main__":
    main()
