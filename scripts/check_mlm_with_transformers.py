#!/usr/bin/env python3
"""Check that a masked-language model bertbench exported (the MLM lab's export) loads in
PyTorch + transformers with `AutoModelForMaskedLM` (`AutoModelForPreTraining` where it was
exported with its sentence-pair head, as `BertForPreTraining` or `AlbertForPreTraining`) and fills
the masks as bertbench did; an ELECTRA discriminator (`ElectraForPreTraining`, rows with
`replaced_logits`) gives bertbench's replaced-token logits:

    python3 scripts/check_mlm_with_transformers.py FOLDER FILLS.json [MORE PROBS.json ...]

FOLDER is the exported folder (or its zip). FILLS.json is
`[{"text": ..., "input_ids": [...], "fills": [{"position": p, "top": [[piece, prob], ...]}]}]`
as bertbench computed them. Loading must report no missing or unexpected weights, `AutoTokenizer`
must give the same ids, and each mask's top pieces must be the same, in the same order, with
probabilities within 1e-4. Needs torch, transformers, safetensors.
"""
import json
import sys

import torch
from transformers import AutoConfig, AutoModelForMaskedLM, AutoModelForPreTraining, AutoTokenizer

from check_classifier_with_transformers import folder


def check(path, fills_path):
    d = folder(path)
    rows = json.load(open(fills_path))
    tok = AutoTokenizer.from_pretrained(d)
    pretraining = AutoConfig.from_pretrained(d).architectures[0].endswith("ForPreTraining")
    auto = AutoModelForPreTraining if pretraining else AutoModelForMaskedLM
    model, info = auto.from_pretrained(d, output_loading_info=True)
    model.eval()
    problems = {k: v for k, v in info.items() if v and k in ("missing_keys", "unexpected_keys", "mismatched_keys")}
    if problems:
        raise SystemExit(f"{d}: loading reported {problems}")
    worst = 0.0
    for row in rows:
        enc = tok(row["text"], return_tensors="pt")
        ids = enc["input_ids"][0].tolist()
        if ids != row["input_ids"]:
            raise SystemExit(f"AutoTokenizer gives {ids} for {row['text']!r}; bertbench gave {row['input_ids']}")
        with torch.no_grad():
            out = model(**enc)
        if "replaced_logits" in row:
            # An ELECTRA discriminator: one replaced-or-not logit per token.
            got = out.logits[0].tolist()
            worst = max(worst, max(abs(a - b) for a, b in zip(got, row["replaced_logits"])))
            continue
        probs = torch.softmax((out.prediction_logits if pretraining else out.logits)[0], -1)
        for fill in row["fills"]:
            k = len(fill["top"])
            p, top = probs[fill["position"]].topk(k)
            pieces = tok.convert_ids_to_tokens(top.tolist())
            want = [piece for piece, _ in fill["top"]]
            if pieces != want:
                raise SystemExit(f"{row['text']!r} at {fill['position']}: transformers' top {pieces}, bertbench's {want}")
            worst = max(worst, max(abs(a - b) for a, (_, b) in zip(p.tolist(), fill["top"])))
    what = "replaced-token logits" if "replaced_logits" in rows[0] else "the same top pieces; probabilities"
    print(f"{type(model).__name__}: {what} within {worst:.2e} over {len(rows)} texts")
    if worst > 1e-4:
        raise SystemExit(f"{d}: max abs error {worst:.2e} > 1e-4")


if __name__ == "__main__":
    from check_classifier_with_transformers import run_all

    run_all(check)
