#!/usr/bin/env python3
"""Check bertbench's entity-level tagging scores against seqeval's (its default mode, the
CoNLL evaluation script's rules):

    python3 scripts/check_seqeval.py CASE.json

CASE.json is `{"truth": [[tag, ...], ...], "pred": [[tag, ...], ...], "precision": p,
"recall": r, "f1": f, "per_type": {type: [precision, recall, f1, support], ...}}` as bertbench
scored the sentences. seqeval scores the same tags (`precision_score`, `recall_score`,
`f1_score`, micro-averaged, and `classification_report` per type); exit status 0 when every
figure agrees within 1e-6 and both name the same entity types. Needs seqeval.
"""
import json
import sys
import warnings

from seqeval.metrics import classification_report, f1_score, precision_score, recall_score


def main(path):
    case = json.load(open(path))
    truth, pred = case["truth"], case["pred"]
    warnings.simplefilter("ignore")  # seqeval warns of 0/0, which both sides score 0
    ours = {"precision": case["precision"], "recall": case["recall"], "f1": case["f1"]}
    theirs = {
        "precision": precision_score(truth, pred, zero_division=0),
        "recall": recall_score(truth, pred, zero_division=0),
        "f1": f1_score(truth, pred, zero_division=0),
    }
    worst = max(abs(ours[k] - theirs[k]) for k in ours)
    print(f"micro: bertbench {ours}  seqeval {theirs}")
    report = classification_report(truth, pred, output_dict=True, zero_division=0)
    types = {k: v for k, v in report.items() if not k.endswith(" avg")}
    if set(types) != set(case["per_type"]):
        print(f"entity types differ: seqeval {sorted(types)}, bertbench {sorted(case['per_type'])}")
        raise SystemExit(1)
    for kind, row in sorted(types.items()):
        mine = case["per_type"][kind]
        theirs = [row["precision"], row["recall"], row["f1-score"], row["support"]]
        err = max(abs(a - b) for a, b in zip(mine, theirs))
        worst = max(worst, err)
        print(f"{err:.1e}  {kind}: bertbench {mine}  seqeval {theirs}")
    print(f"seqeval vs bertbench over {len(truth)} sentences: max abs error {worst:.1e}")
    if worst > 1e-6:
        raise SystemExit(1)


if __name__ == "__main__":
    main(sys.argv[1])
