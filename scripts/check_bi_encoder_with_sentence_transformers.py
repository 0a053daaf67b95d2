#!/usr/bin/env python3
"""Check that a bi-encoder bertbench exported gives, in sentence-transformers, the vectors and
cosines the page (or the CLI) gave, loaded as any user loads it:

    python3 scripts/check_bi_encoder_with_sentence_transformers.py EXPORT ROWS.json [MORE ROWS.json ...]

EXPORT is the exported zip (or its unpacked folder): a sentence-transformers folder (modules.json:
Transformer, Pooling, Dense). ROWS.json is `[{"text": ..., "pair": ..., "cosine": c}, ...]`, the
pair's cosine as bertbench computed it, optionally with "vectors": [[...], [...]], each text's
vector before normalisation.

The folder is loaded with `SentenceTransformer(folder)`; its modules must be the three the page
wrote, and `encode` must give each vector within 1e-4, and `similarity` each cosine within 1e-4.
It also checks the page's correlations: `scipy.stats.pearsonr` and `spearmanr` of the rows'
"gold" and "cosine" equal the "pearson" and "spearman" in ROWS.json where those are given.

Exit status 0 when everything agrees. Needs torch, transformers, sentence-transformers, scipy.
"""
import json
import os
import sys

import torch
from scipy.stats import pearsonr, spearmanr
from sentence_transformers import SentenceTransformer

sys.path.insert(0, os.path.dirname(__file__))
from check_classifier_with_transformers import folder, run_all  # noqa: E402


def check(path, rows_path):
    d = folder(path)
    rows = json.load(open(rows_path))
    model = SentenceTransformer(d, device="cpu")
    model.eval()
    kinds = [type(m).__name__ for m in model]
    if kinds != ["Transformer", "Pooling", "Dense"]:
        raise SystemExit(f"{d}: sentence-transformers built {kinds}; expected Transformer, Pooling, Dense")
    print(f"loaded SentenceTransformer {kinds}, max_seq_length {model.max_seq_length}")
    worst = 0.0
    for row in rows:
        texts = [row["text"], row["pair"]]
        with torch.no_grad():
            got = model.encode(texts, convert_to_tensor=True, normalize_embeddings=False)
            cosine = model.similarity(got[0:1], got[1:2])[0, 0].item()
        err = abs(cosine - row["cosine"])
        if "vectors" in row:
            ours = torch.tensor(row["vectors"])
            if got.shape != ours.shape:
                raise SystemExit(f"sentence-transformers gives vectors of shape {list(got.shape)}, bertbench {list(ours.shape)}")
            err = max(err, (got - ours).abs().max().item())
        worst = max(worst, err)
        print(f"{err:.2e}  cosine {cosine:.4f}  {row['text'][:30]!r} / {row['pair'][:30]!r}")
    if worst > 1e-4:
        raise SystemExit(f"{d}: max abs error {worst:.2e} > 1e-4")
    gold = [r["gold"] for r in rows if "gold" in r]
    if gold and "pearson" in rows[0]:
        pred = [r["cosine"] for r in rows]
        p, s = pearsonr(gold, pred).statistic, spearmanr(gold, pred).statistic
        if abs(p - rows[0]["pearson"]) > 1e-4 or abs(s - rows[0]["spearman"]) > 1e-4:
            raise SystemExit(f"scipy: Pearson {p:.6f}, Spearman {s:.6f}; bertbench {rows[0]['pearson']:.6f}, {rows[0]['spearman']:.6f}")
        print(f"scipy agrees: Pearson {p:.6f}, Spearman {s:.6f}")
    print(f"sentence-transformers vs bertbench vectors and cosines: max abs error {worst:.2e} over {len(rows)} pairs")


if __name__ == "__main__":
    run_all(check)
