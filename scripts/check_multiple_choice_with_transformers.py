#!/usr/bin/env python3
"""Check that a multiple-choice model bertbench exported gives, in PyTorch + transformers, the
probabilities over endings that bertbench gave, loaded as any user loads it:

    python3 scripts/check_multiple_choice_with_transformers.py EXPORT ROWS.json [EXPORT ROWS.json ...]

EXPORT is the exported folder. ROWS.json is
`[{"premise": ..., "choices": [...], "input_ids": [[...], ...], "probs": [p0, p1, ...]}, ...]`:
each question's premise, the text read after it for each ending, the token ids bertbench gave
each (premise, ending) pair, and its probability of each ending.

The folder is loaded with `AutoTokenizer` and `AutoModelForMultipleChoice`, as it is (its
`config.json` must name the family's own `*ForMultipleChoice` and carry no `auto_map`), and
loading must report no missing, unexpected or mismatched weights. `AutoTokenizer` must give the
same ids (the premise with each ending, as `run_swag.py` tokenizes them), and the model's
softmax over each question's endings must agree within 1e-4. Prints `== ` once per export
checked. Exit status 0 when all agree. Needs torch, transformers, safetensors.
"""
import json
import os
import sys

import torch
from transformers import AutoModelForMultipleChoice, AutoTokenizer

TOLERANCE = 1e-4
FAMILIES = ("Bert", "Roberta", "XLMRoberta", "Camembert", "Albert", "MPNet", "DebertaV2", "ModernBert")


def check(d, rows_path):
    config = json.load(open(os.path.join(d, "config.json")))
    arch = config["architectures"][0]
    if arch not in [f + "ForMultipleChoice" for f in FAMILIES] or "auto_map" in config:
        raise SystemExit(f"{d}: {arch} is not a transformers *ForMultipleChoice class loaded as it is")
    max_len = config["bertbench_head"]["max_len"]
    tok = AutoTokenizer.from_pretrained(d)
    model, info = AutoModelForMultipleChoice.from_pretrained(d, output_loading_info=True)
    model.eval()
    problems = {k: v for k, v in info.items() if v and k in ("missing_keys", "unexpected_keys", "mismatched_keys")}
    if problems:
        raise SystemExit(f"{d}: loading reported {problems}")
    if type(model).__name__ != arch:
        raise SystemExit(f"{d}: loaded {type(model).__name__}, config names {arch}")
    worst = 0.0
    for row in json.load(open(rows_path)):
        choices = row["choices"]
        enc = tok([row["premise"]] * len(choices), choices, truncation=True, max_length=max_len, padding=True, return_tensors="pt")
        for i, want in enumerate(row["input_ids"]):
            got = [t for t, m in zip(enc["input_ids"][i].tolist(), enc["attention_mask"][i].tolist()) if m]
            if got != want:
                raise SystemExit(f"{d}: ending {i} of {row['premise']!r}: transformers' ids {got} != bertbench's {want}")
        # [1, endings, seq]: one question, its endings side by side, as BertForMultipleChoice takes them.
        inputs = {k: v.unsqueeze(0) for k, v in enc.items()}
        with torch.no_grad():
            logits = model(**inputs).logits[0]
        probs = torch.softmax(logits, dim=-1).tolist()
        err = max(abs(a - b) for a, b in zip(probs, row["probs"]))
        worst = max(worst, err)
        if len(probs) != len(row["probs"]) or err > TOLERANCE:
            raise SystemExit(f"{d}: {row['premise']!r}: transformers {probs} vs bertbench {row['probs']} (max error {err})")
    print(f"== {os.path.basename(d)}: {type(model).__name__} loaded as it is; probabilities over endings agree (max error {worst:.2e})")


def main(args):
    if len(args) < 2 or len(args) % 2:
        raise SystemExit(__doc__)
    for d, rows in zip(args[::2], args[1::2]):
        check(d, rows)


if __name__ == "__main__":
    main(sys.argv[1:])
