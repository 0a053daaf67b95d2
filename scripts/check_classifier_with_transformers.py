#!/usr/bin/env python3
"""Check that a classifier bertbench exported gives, in PyTorch + transformers, the
probabilities the page (or the CLI) gave, loaded as any user loads it:

    python3 scripts/check_classifier_with_transformers.py EXPORT PROBS.json

EXPORT is the exported zip (or its unpacked folder). PROBS.json is
`[{"text": ..., "pair": null | ..., "probs": [p0, p1, ...]}, ...]` as bertbench computed them,
optionally with the `input_ids` it gave (then `AutoTokenizer` must give the same).

The folder is loaded with `AutoTokenizer` and `AutoModelForSequenceClassification`: as it is
when it is the family's `*ForSequenceClassification` (`[CLS]` + pooler features), with
`trust_remote_code=True` when its `config.json` has an `auto_map` (its own modelling code, for
every other feature and family). Loading must report no missing or unexpected weights.

Exit status 0 when every probability agrees within 1e-4. Needs torch, transformers, safetensors.
"""
import json
import os
import sys
import tempfile
import zipfile

import torch
from transformers import AutoModelForSequenceClassification, AutoTokenizer


def folder(path):
    if os.path.isdir(path):
        return path
    out = tempfile.mkdtemp()
    with zipfile.ZipFile(path) as z:
        z.extractall(out)
    inner = [os.path.join(out, d) for d in os.listdir(out)]
    return inner[0] if len(inner) == 1 and os.path.isdir(inner[0]) else out


def main():
    path, probs_path = sys.argv[1], sys.argv[2]
    d = folder(path)
    config = json.load(open(os.path.join(d, "config.json")))
    spec = config["bertbench_head"]["spec"]
    max_len = config["bertbench_head"]["max_len"]
    tok = AutoTokenizer.from_pretrained(d)
    rows = json.load(open(probs_path))
    remote = "auto_map" in config
    native = config["architectures"][0] in ("BertForSequenceClassification", "RobertaForSequenceClassification", "DistilBertForSequenceClassification", "ElectraForSequenceClassification")
    if not (remote or native):
        raise SystemExit(f"{d}: neither a transformers *ForSequenceClassification nor an auto_map: transformers would load a random head")
    model, info = AutoModelForSequenceClassification.from_pretrained(d, trust_remote_code=remote, output_loading_info=True)
    model.eval()
    problems = {k: v for k, v in info.items() if v and k in ("missing_keys", "unexpected_keys", "mismatched_keys")}
    if problems:
        raise SystemExit(f"{d}: loading reported {problems}")
    print(f"loaded {type(model).__name__} ({'trust_remote_code' if remote else 'as it is'}), spec {spec}")
    worst = 0.0
    for row in rows:
        enc = tok(row["text"], row.get("pair"), truncation=True, max_length=max_len, return_tensors="pt")
        if "input_ids" in row and enc["input_ids"][0].tolist() != row["input_ids"]:
            raise SystemExit(f"AutoTokenizer gives {enc['input_ids'][0].tolist()} for {row['text']!r}; bertbench gave {row['input_ids']}")
        with torch.no_grad():
            logits = model(**enc).logits
        ref = torch.softmax(logits, -1)[0]
        ours = torch.tensor(row["probs"])
        err = (ref - ours).abs().max().item()
        worst = max(worst, err)
        print(f"{err:.2e}  {ref.tolist()}  {row['text'][:60]!r}")
    labels = [config["id2label"][str(i)] for i in range(len(config["id2label"]))]
    print(f"labels {labels}; transformers vs bertbench probabilities: max abs error {worst:.2e} over {len(rows)} texts")
    sys.exit(0 if worst <= 1e-4 else 1)


if __name__ == "__main__":
    main()
