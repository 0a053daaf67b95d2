#!/usr/bin/env python3
"""Check that a classifier bertbench exported gives, in PyTorch + transformers, the
probabilities the page (or the CLI) gave.

    python3 scripts/check_classifier_with_transformers.py EXPORT PROBS.json

EXPORT is the exported zip (or its unpacked folder). PROBS.json is
`[{"text": ..., "pair": null | ..., "probs": [p0, p1, ...]}, ...]` as bertbench computed them.

- `[CLS]` + pooler features: the folder is a `BertForSequenceClassification`, loaded with
  `AutoModelForSequenceClassification` exactly as it is.
- Any other feature: `AutoModel` for the encoder, and `classifier_head.safetensors` applied to
  the features `config.json`'s `bertbench_head.spec` names.

Exit status 0 when every probability agrees within 1e-4. Needs torch, transformers, safetensors.
"""
import json
import os
import sys
import tempfile
import zipfile

import torch
from safetensors.torch import load_file
from transformers import AutoModel, AutoModelForSequenceClassification, AutoTokenizer


def folder(path):
    if os.path.isdir(path):
        return path
    out = tempfile.mkdtemp()
    with zipfile.ZipFile(path) as z:
        z.extractall(out)
    inner = [os.path.join(out, d) for d in os.listdir(out)]
    return inner[0] if len(inner) == 1 and os.path.isdir(inner[0]) else out


def features(outputs, mask, spec):
    states = outputs.hidden_states  # embeddings, then each layer
    layers = len(states) - 1
    span = min(4, layers)

    def pool(h):
        if spec["pooling"] == "Mean":
            m = mask.unsqueeze(-1).to(h.dtype)
            return (h * m).sum(1) / m.sum(1).clamp(min=1)
        return h[:, 0]

    kind = spec["layers"]
    if kind == "Last":
        return pool(states[-1])
    if kind == "SecondToLast":
        return pool(states[-2])
    if kind == "SumLastFour":
        return pool(sum(states[layers + 1 - span:]))
    if kind == "ConcatLastFour":
        return torch.cat([pool(h) for h in states[layers + 1 - span:]], dim=-1)
    raise SystemExit(f"unknown layers {kind}")


def main():
    path, probs_path = sys.argv[1], sys.argv[2]
    d = folder(path)
    config = json.load(open(os.path.join(d, "config.json")))
    spec = config["bertbench_head"]["spec"]
    max_len = config["bertbench_head"]["max_len"]
    tok = AutoTokenizer.from_pretrained(d)
    rows = json.load(open(probs_path))
    native = spec == {"pooling": "Pooler", "layers": "Last"}
    if native:
        model = AutoModelForSequenceClassification.from_pretrained(d).eval()
    else:
        model = AutoModel.from_pretrained(d).eval()
        head = load_file(os.path.join(d, "classifier_head.safetensors"))
    worst = 0.0
    for row in rows:
        enc = tok(row["text"], row.get("pair"), truncation=True, max_length=max_len, return_tensors="pt")
        with torch.no_grad():
            if native:
                logits = model(**enc).logits
            else:
                out = model(**enc, output_hidden_states=True)
                x = features(out, enc["attention_mask"], spec)
                logits = x @ head["classifier.weight"].T + head["classifier.bias"]
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
