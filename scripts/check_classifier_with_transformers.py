#!/usr/bin/env python3
"""Check that a classifier bertbench exported gives, in PyTorch + transformers, the
probabilities the page (or the CLI) gave, loaded as any user loads it:

    python3 scripts/check_classifier_with_transformers.py EXPORT PROBS.json [MORE PROBS.json ...]

EXPORT is the exported zip (or its unpacked folder). PROBS.json is
`[{"text": ..., "pair": null | ..., "probs": [p0, p1, ...]}, ...]` as bertbench computed them,
optionally with the `input_ids` it gave (then `AutoTokenizer` must give the same). For a token
classifier, "probs" holds one list per token of the text's encoding, specials included, or
"word_probs" one list per word (each word read at its first piece, as the page tags words).
A multi-label classifier's (`problem_type` "multi_label_classification") "probs" are each
label's sigmoid, checked against the model's logits and against the `text-classification`
pipeline's scores (`top_k=None`), as a user gets them. For a similarity cross-encoder (one label, `problem_type` "regression"), "scores" holds its one
output, compared as transformers computes it (no softmax). For a question-answering model,
"text" is the question, "pair" the passage, and "start_logits"
and "end_logits" hold one logit per token instead of "probs"; or, as the page shows a passage
that fits one window, "passage_probs" holds each passage token's [start, end] probabilities
(softmax over the window) and "answer" the best span's text (start + end logit, end not before
start, at most 30 tokens), searched here by brute force. For a multiple-choice model
(`*ForMultipleChoice`), a row is `{"premise": ..., "endings": [...], "probs": [...]}`: each
ending's probability, the premise read with each ending and softmaxed over them.

The folder is loaded with `AutoTokenizer` and `AutoModelForSequenceClassification` (or
`AutoModelForTokenClassification`, `AutoModelForMultipleChoice`, when config.json names that
kind of class): as it is
when it is the family's own class (`[CLS]` + pooler features; a token classifier's last layer), with
`trust_remote_code=True` when its `config.json` has an `auto_map` (its own modelling code, for
every other feature and family). Loading must report no missing or unexpected weights. A folder
with its own modelling code is also loaded without `trust_remote_code`, as a user who forgets it
would: that must fail loudly, never load as the family's own class with other numbers.

Exit status 0 when every probability agrees within 1e-4. Needs torch, transformers, safetensors.
"""
import json
import os
import sys
import tempfile
import zipfile

import torch
from transformers import (
    AutoModelForMultipleChoice,
    AutoModelForQuestionAnswering,
    AutoModelForSequenceClassification,
    AutoModelForTokenClassification,
    AutoTokenizer,
    pipeline,
)

FAMILIES = ("Bert", "Roberta", "DistilBert", "Electra", "XLMRoberta", "Camembert", "Albert", "MPNet", "ModernBert", "DebertaV2")


def folder(path):
    if os.path.isdir(path):
        return path
    out = tempfile.mkdtemp()
    with zipfile.ZipFile(path) as z:
        z.extractall(out)
    inner = [os.path.join(out, d) for d in os.listdir(out)]
    return inner[0] if len(inner) == 1 and os.path.isdir(inner[0]) else out


def check(path, probs_path):
    d = folder(path)
    config = json.load(open(os.path.join(d, "config.json")))
    spec = config["bertbench_head"]["spec"]
    max_len = config["bertbench_head"]["max_len"]
    tok = AutoTokenizer.from_pretrained(d)
    rows = json.load(open(probs_path))
    remote = "auto_map" in config
    tokens = config["architectures"][0].endswith("ForTokenClassification")
    spans = config["architectures"][0].endswith("ForQuestionAnswering")
    choice = config["architectures"][0].endswith("ForMultipleChoice")
    task = "ForQuestionAnswering" if spans else "ForTokenClassification" if tokens else "ForMultipleChoice" if choice else "ForSequenceClassification"
    native = config["architectures"][0] in [f + task for f in FAMILIES]
    if not (remote or native):
        raise SystemExit(f"{d}: neither a transformers *{task} nor an auto_map: transformers would load a random head")
    auto = (
        AutoModelForQuestionAnswering if spans
        else AutoModelForTokenClassification if tokens
        else AutoModelForMultipleChoice if choice
        else AutoModelForSequenceClassification
    )
    if remote:
        refuse_without_remote_code(auto, d)
    model, info = auto.from_pretrained(d, trust_remote_code=remote, output_loading_info=True)
    model.eval()
    problems = {k: v for k, v in info.items() if v and k in ("missing_keys", "unexpected_keys", "mismatched_keys")}
    if problems:
        raise SystemExit(f"{d}: loading reported {problems}")
    print(f"loaded {type(model).__name__} ({'trust_remote_code' if remote else 'as it is'}), spec {spec}")
    worst = 0.0
    for row in rows:
        if choice:
            worst = max(worst, check_choice(model, tok, row, max_len))
            continue
        enc = tok(row["text"], row.get("pair"), truncation=True, max_length=max_len, return_tensors="pt")
        if "input_ids" in row and enc["input_ids"][0].tolist() != row["input_ids"]:
            raise SystemExit(f"AutoTokenizer gives {enc['input_ids'][0].tolist()} for {row['text']!r}; bertbench gave {row['input_ids']}")
        with torch.no_grad():
            out = model(**enc)
        if spans and "passage_probs" in row:
            worst = max(worst, check_answer(tok, row, enc, out))
            continue
        if spans:
            ref = torch.stack([out.start_logits[0], out.end_logits[0]])
            ours = torch.tensor([row["start_logits"], row["end_logits"]])
            if ref.shape != ours.shape:
                raise SystemExit(f"transformers gives logits of shape {list(ref.shape)}, bertbench {list(ours.shape)}")
            err = (ref - ours).abs().max().item()
            worst = max(worst, err)
            print(f"{err:.2e}  start/end logits of {row['text'][:40]!r}")
            continue
        if "scores" in row:
            if config.get("problem_type") != "regression" or len(config["id2label"]) != 1:
                raise SystemExit(f"{d}: a similarity model must be transformers' regression (one label, problem_type regression)")
            err = (out.logits[0] - torch.tensor(row["scores"])).abs().max().item()
            worst = max(worst, err)
            print(f"{err:.2e}  score {out.logits[0].tolist()}  {row['text'][:40]!r} / {row['pair'][:40]!r}")
            continue
        # A multi-label classifier's scores are each label's sigmoid, as the pipeline gives them.
        multi = config.get("problem_type") == "multi_label_classification"
        ref = torch.sigmoid(out.logits)[0] if multi else torch.softmax(out.logits, -1)[0]
        if "word_probs" in row:
            # A tagger's words as the page shows them: each read at its first piece.
            firsts = {}
            for position, word in enumerate(enc.word_ids(0)):
                if word is not None:
                    firsts.setdefault(word, position)
            if len(firsts) != len(row["word_probs"]):
                raise SystemExit(f"AutoTokenizer splits {row['text']!r} into {len(firsts)} words; bertbench showed {len(row['word_probs'])}")
            ref = ref[[firsts[w] for w in sorted(firsts)]]
            row = {**row, "probs": row["word_probs"]}
        ours = torch.tensor(row["probs"])
        if ref.shape != ours.shape:
            raise SystemExit(f"transformers gives probabilities of shape {list(ref.shape)}, bertbench {list(ours.shape)}")
        err = (ref - ours).abs().max().item()
        if multi and not tokens:
            err = max(err, check_pipeline(model, tok, config, row, max_len))
        worst = max(worst, err)
        print(f"{err:.2e}  {ref.tolist()}  {row['text'][:60]!r}")
    labels = [config["id2label"][str(i)] for i in range(len(config["id2label"]))]
    what = "start and end logits" if spans else "probabilities"
    print(f"labels {labels}; transformers vs bertbench {what}: max abs error {worst:.2e} over {len(rows)} texts")
    if worst > 1e-4:
        raise SystemExit(f"{d}: max abs error {worst:.2e} > 1e-4")


def check_pipeline(model, tok, config, row, max_len):
    """The `text-classification` pipeline's scores of a multi-label classifier, as a user gets
    them (`top_k=None`: every label; the pipeline applies a sigmoid per label because config.json
    says multi_label_classification), against bertbench's; returns the largest difference."""
    pipe = pipeline("text-classification", model=model, tokenizer=tok, top_k=None)
    text = row["text"] if row.get("pair") is None else {"text": row["text"], "text_pair": row["pair"]}
    # A list of one input gives a list of one answer in every transformers version (a bare
    # input's answer is nested differently across versions).
    scores = {r["label"]: r["score"] for r in pipe([text], truncation=True, max_length=max_len)[0]}
    labels = [config["id2label"][str(i)] for i in range(len(config["id2label"]))]
    if sorted(scores) != sorted(labels):
        raise SystemExit(f"the pipeline gives labels {sorted(scores)}, config.json names {labels}")
    return max(abs(scores[l] - p) for l, p in zip(labels, row["probs"]))


def refuse_without_remote_code(auto, d):
    """Loading a folder that carries its own modelling code without `trust_remote_code` must
    raise, not quietly build a model that computes something else."""
    try:
        model = auto.from_pretrained(d)
    except Exception as e:  # transformers raises ValueError (or OSError) naming trust_remote_code
        print(f"without trust_remote_code: refused ({type(e).__name__}: {str(e).splitlines()[0][:120]})")
        return
    raise SystemExit(f"{d}: loads without trust_remote_code as {type(model).__name__}, which computes other numbers than bertbench")


def check_answer(tok, row, enc, out):
    """The passage tokens' start/end probabilities and the best span's text, as the page showed
    them; returns the largest probability error."""
    sequence = enc.sequence_ids(0)
    passage = [i for i, s in enumerate(sequence) if s == 1]
    start, end = torch.softmax(out.start_logits[0], -1), torch.softmax(out.end_logits[0], -1)
    ref = torch.stack([start[passage], end[passage]], dim=1)
    ours = torch.tensor(row["passage_probs"])
    if ref.shape != ours.shape:
        raise SystemExit(f"transformers gives {ref.shape[0]} passage tokens, bertbench {ours.shape[0]}")
    err = (ref - ours).abs().max().item()
    best, span = None, None
    s_logits, e_logits = out.start_logits[0], out.end_logits[0]
    for i in passage:
        for j in passage:
            if i <= j < i + 30:
                score = (s_logits[i] + e_logits[j]).item()
                if best is None or score > best:
                    best, span = score, (i, j)
    offsets = tok(row["text"], row["pair"], return_offsets_mapping=True)["offset_mapping"]
    answer = row["pair"][offsets[span[0]][0]:offsets[span[1]][1]]
    if answer != row["answer"]:
        raise SystemExit(f"transformers' best span is {answer!r}; bertbench answered {row['answer']!r}")
    print(f"{err:.2e}  passage probabilities; best span {answer!r} in both, for {row['text'][:40]!r}")
    return err


def check_choice(model, tok, row, max_len):
    """A question's ending probabilities as the page showed them: the premise read with each
    ending (one padded batch of `[1, endings, tokens]`), softmaxed over the endings; returns the
    largest error."""
    n = len(row["endings"])
    enc = tok([row["premise"]] * n, row["endings"], truncation=True, max_length=max_len, padding=True, return_tensors="pt")
    with torch.no_grad():
        out = model(**{k: v.unsqueeze(0) for k, v in enc.items()})
    ref = torch.softmax(out.logits[0], -1)
    ours = torch.tensor(row["probs"])
    if ref.shape != ours.shape:
        raise SystemExit(f"transformers gives {ref.shape[0]} ending probabilities, bertbench {ours.shape[0]}")
    err = (ref - ours).abs().max().item()
    print(f"{err:.2e}  {ref.tolist()}  {row['premise'][:60]!r}")
    return err


def run_all(check):
    """Runs `check` on each (folder, rows) pair of the command line in one process (importing
    torch and transformers once); exit status 1 when any fails."""
    failed = []
    for path, rows in zip(sys.argv[1::2], sys.argv[2::2]):
        print(f"== {path}")
        try:
            check(path, rows)
        except SystemExit as e:
            print(f"FAILED: {e}")
            failed.append(path)
    sys.exit(1 if failed or len(sys.argv) < 3 else 0)


if __name__ == "__main__":
    run_all(check)
