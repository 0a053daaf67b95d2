#!/usr/bin/env python3
"""Check that a checkpoint bertbench wrote loads in Hugging Face `transformers` unchanged and
gives the embedding our engine gives.

    cargo run -p bertbench-cli -- init --preset tiny --tokenizer-from public/models/all-MiniLM-L6-v2 --out public/models/bert-tiny
    python3 scripts/check_export_with_transformers.py public/models/bert-tiny "hello world"

Needs torch and transformers (pip), and builds/runs the `bertbench` CLI through cargo.
"""
import json
import subprocess
import sys

import torch
from transformers import AutoTokenizer, BertModel

model_dir, text = sys.argv[1], sys.argv[2]
model = BertModel.from_pretrained(model_dir).eval()
tok = AutoTokenizer.from_pretrained(model_dir)
enc = tok(text, return_tensors="pt")
with torch.no_grad():
    reference = model(**enc).last_hidden_state[0].mean(0)
line = subprocess.check_output(
    ["cargo", "run", "-q", "-p", "bertbench-cli", "--", "embed", "--model", model_dir, text]
)
ours = torch.tensor(json.loads(line)["embedding"])
err = (reference - ours).abs().max().item()
print(f"transformers vs bertbench, mean-pooled: max abs error {err:.2e}")
sys.exit(0 if err <= 1e-4 else 1)
