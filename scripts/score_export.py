#!/usr/bin/env python3
"""Score a model the page (or the CLI) exported on a task's measured file, in PyTorch, loaded as
any user loads it: the real-data benchmark's independent check that an export scores what the
page says (bench/real_data.mjs --side page).

    python3 scripts/score_export.py --task tag|pairs|similarity-bi|similarity-cross|qa EXPORT MEASURED
        [--max-len N] [--window 192 --stride 64]

EXPORT is the exported zip (or its unpacked folder). MEASURED is read as bench_pytorch_tasks.py
(CoNLL columns, IOB1 repaired to IOB2; a TSV or JSON Lines of pairs) and bench_pytorch_qa.py
(SQuAD JSON) read it. The model is loaded with `AutoModelFor*` (with `trust_remote_code` where
its config.json has an `auto_map`: bertbench's own pooling), a bi-encoder with
`SentenceTransformer`. Metrics as the benchmark's other sides compute them: seqeval's entity F1
(each word tagged at its first piece); accuracy and the F1 of label "1"; Spearman of the output
or of the cosine (×100); SQuAD's exact match and F1 (best span of start + end logits over the
windows, at most 30 tokens). Prints one line: `SCORE {"metric": value, ...}`.
"""
import argparse
import json
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_pytorch_tasks import read_conll, read_pairs, score  # noqa: E402
from check_classifier_with_transformers import folder  # noqa: E402


def remote(d):
    return "auto_map" in json.load(open(os.path.join(d, "config.json")))


def auto(cls, d):
    return cls.from_pretrained(d, trust_remote_code=remote(d)).eval()


def tokenizer(d):
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(d, trust_remote_code=remote(d))


def tagged(d, path, max_len):
    from transformers import AutoModelForTokenClassification

    tok, model = tokenizer(d), auto(AutoModelForTokenClassification, d)
    labels = [model.config.id2label[i] for i in range(model.config.num_labels)]
    sentences, _ = read_conll(path)
    rows, examples = [], []
    with torch.no_grad():
        for words, tags in sentences:
            enc = tok(words, is_split_into_words=True, truncation=True, max_length=max_len, return_tensors="pt")
            logits = model(**enc).logits[0]
            first = {}
            for k, w in enumerate(enc.word_ids()):
                if w is not None and w not in first:
                    first[w] = k
            # Words cut off by the length are scored by neither side (bench_pytorch_tasks.py).
            kept = [w for w in range(len(words)) if w in first]
            rows.append(logits[[first[w] for w in kept]])
            examples.append({"tags": [tags[w] for w in kept]})
    return score("tag", torch.cat(rows), examples, labels)


def pairs(d, path, max_len, task):
    from transformers import AutoModelForSequenceClassification

    tok, model = tokenizer(d), auto(AutoModelForSequenceClassification, d)
    data = read_pairs(path)
    outs = []
    with torch.no_grad():
        for k in range(0, len(data), 64):
            chunk = data[k:k + 64]
            enc = tok([a for a, _, _ in chunk], [b for _, b, _ in chunk], truncation=True, max_length=max_len, padding=True, return_tensors="pt")
            outs.append(model(**enc).logits)
    out = torch.cat(outs)
    if task == "pairs":
        labels = [model.config.id2label[i] for i in range(model.config.num_labels)]
        return score("pairs", out, [{"target": labels.index(y)} for _, _, y in data], labels)
    return score(task, out[:, 0], [{"target": float(y)} for _, _, y in data], None)


def bi(d, path, max_len):
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(d, device="cpu")
    model.max_seq_length = max_len
    data = read_pairs(path)
    a = model.encode([x for x, _, _ in data], convert_to_tensor=True, normalize_embeddings=True)
    b = model.encode([y for _, y, _ in data], convert_to_tensor=True, normalize_embeddings=True)
    return score("similarity-bi", (a * b).sum(-1), [{"target": float(y)} for _, _, y in data], None)


def answers(d, path, window, stride):
    from transformers import AutoModelForQuestionAnswering

    from bench_pytorch_qa import f1_score, normalize_answer, predict, read_squad, windows

    tok, model = tokenizer(d), auto(AutoModelForQuestionAnswering, d)
    items = read_squad(path)
    preds = predict(model, items, windows(tok, items, window, stride))
    exact = f1 = 0.0
    for q, p in zip(items, preds):
        gold = [t for t, _ in q["answers"]] or [""]
        exact += max(float(normalize_answer(p) == normalize_answer(g)) for g in gold)
        f1 += max(f1_score(p, g) for g in gold)
    return {"exact match": 100 * exact / len(items), "F1": 100 * f1 / len(items)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--task", required=True, choices=["tag", "pairs", "similarity-bi", "similarity-cross", "qa"])
    ap.add_argument("export")
    ap.add_argument("measured")
    ap.add_argument("--max-len", type=int, default=128)
    ap.add_argument("--window", type=int, default=192)
    ap.add_argument("--stride", type=int, default=64)
    args = ap.parse_args()
    torch.set_num_threads(2)
    d = folder(args.export)
    if args.task == "tag":
        result = tagged(d, args.measured, args.max_len)
    elif args.task == "qa":
        result = answers(d, args.measured, args.window, args.stride)
    elif args.task == "similarity-bi":
        result = bi(d, args.measured, args.max_len)
    else:
        result = pairs(d, args.measured, args.max_len, args.task)
    print("SCORE " + json.dumps(result))


if __name__ == "__main__":
    main()
