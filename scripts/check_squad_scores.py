#!/usr/bin/env python3
"""Check bertbench's SQuAD scores against the official evaluation script's functions, as
`torchmetrics` ships them (`torchmetrics.functional.text.squad`: SQuAD 2.0's `normalize_answer`,
`compute_exact` and `compute_f1`, empty answers included):

    python3 scripts/check_squad_scores.py CASES.json

CASES.json is `[{"gold": [answer, ...], "pred": text, "exact": 0|1, "f1": x}, ...]` as
bertbench scored them; a question without an answer has an empty gold list. Each is scored as
the official script does: gold answers that normalise to nothing dropped, the empty answer
when none is left, the best exact match and F1 over the gold answers. Exit status 0 when
every score agrees within 1e-6. Needs torch and torchmetrics.
"""
import json
import sys

from torchmetrics.functional.text.squad import _compute_exact_match_score, _compute_f1_score, _normalize_text


def compute_exact(gold, pred):
    return int(_compute_exact_match_score(pred, gold))


def compute_f1(gold, pred):
    return float(_compute_f1_score(pred, gold))


def normalize_answer(s):
    return _normalize_text(s)


def main(path):
    cases = json.load(open(path))
    worst = 0.0
    for case in cases:
        gold = [a for a in case["gold"] if normalize_answer(a)] or [""]
        exact = max(compute_exact(a, case["pred"]) for a in gold)
        f1 = max(compute_f1(a, case["pred"]) for a in gold)
        err = max(abs(exact - case["exact"]), abs(f1 - case["f1"]))
        worst = max(worst, err)
        print(f"{err:.1e}  exact {exact} f1 {f1:.4f}  gold {case['gold']!r} pred {case['pred']!r}")
    print(f"official script vs bertbench over {len(cases)} cases: max abs error {worst:.1e}")
    if worst > 1e-6 or not cases:
        raise SystemExit(1)


if __name__ == "__main__":
    main(sys.argv[1])
