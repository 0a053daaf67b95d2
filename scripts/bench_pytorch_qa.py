#!/usr/bin/env python3
"""The PyTorch reference for extractive question answering: `transformers`' SQuAD recipe (the
`run_qa.py` example) on the same windows as `bertbench finetune --task qa`, on the same machine.

    python3 scripts/bench_pytorch_qa.py MODEL_DIR TRAIN.json DEV.json [--batch 16] [--epochs 2]
        [--lr 5e-5] [--window 192] [--stride 64] [--train-questions N] [--dev-questions N]
        [--seed 42] [--threads 2] [--head-dropout P] [--group-by-length] [--mask-padding]

Windows: question then passage, `truncation="only_second"`, `max_length` = window, `stride`
passage tokens shared by consecutive windows; a window that does not hold the whole (first)
answer is labelled (0, 0), `[CLS]`. Model: `AutoModelForQuestionAnswering` (a fresh
`qa_outputs`), dropout 0.1 as the checkpoint's config says, loss (CE(start) + CE(end)) / 2 over
every token of the window (batches padded to their longest window). AdamW (eps 1e-8, weight
decay 0.01 except biases and LayerNorm), linear warmup over 10% of the steps then linear decay,
gradients clipped at norm 1. Evaluation as `run_qa.py`'s post-processing for SQuAD v1.1: the 20
best starts and ends of each window's passage tokens, answers of at most 30 tokens, the best
start + end logit over the question's windows; SQuAD v1.1's exact match and F1 (the best over
the gold answers). Prints each epoch's mean training loss, then EM/F1 and the training time.

`--head-dropout P` adds a dropout of P before `qa_outputs` and `--group-by-length` batches
windows of similar length (megabatches of 50 batches, longest first, as `LengthGroupedSampler`
does): both only to reproduce what bertbench did before (see docs/performance.md).

`--mask-padding` leaves the logits of a batch's padding out of the start and end softmax, as
bertbench's loss does (and `make_qa_training_reference.py`'s); without it the loss is the
model's own, `transformers`' recipe, in which a window shorter than its batch's longest has its
padding among the positions the softmax spreads over.

`--train-questions` / `--dev-questions` take the first N questions of each file. Needs torch and
transformers.
"""
import argparse
import collections
import json
import random
import re
import string
import time

import torch
from transformers import AutoModelForQuestionAnswering, AutoTokenizer

from qa_windows import answer_tokens, pad_batch


def read_squad(path, limit=None):
    data = json.load(open(path, encoding="utf-8"))
    items = []
    for article in data["data"]:
        for paragraph in article["paragraphs"]:
            for qa in paragraph["qas"]:
                answers = [(a["text"], a["answer_start"]) for a in qa["answers"]]
                items.append({"id": qa["id"], "question": qa["question"], "context": paragraph["context"], "answers": answers})
    return items[:limit] if limit else items


def windows(tok, items, window, stride):
    """Every question's windows: ids, segments, passage offsets and the answer's token positions."""
    enc = tok(
        [q["question"].lstrip() for q in items],
        [q["context"] for q in items],
        truncation="only_second",
        max_length=window,
        stride=stride,
        return_overflowing_tokens=True,
        return_offsets_mapping=True,
    )
    out = []
    for i, ids in enumerate(enc["input_ids"]):
        q = enc["overflow_to_sample_mapping"][i]
        seq = enc.sequence_ids(i)
        offsets = [o if seq[k] == 1 else None for k, o in enumerate(enc["offset_mapping"][i])]
        context = [k for k, s in enumerate(seq) if s == 1]
        first, last = context[0], context[-1]
        start = end = 0
        if items[q]["answers"]:
            text, char = items[q]["answers"][0]
            start, end = answer_tokens(offsets, first, last, char, char + len(text))
        out.append({"question": q, "input_ids": ids, "token_type_ids": enc["token_type_ids"][i], "offsets": offsets,
                    "start": start, "end": end})
    return out


def grouped(order, lengths, batch, rng):
    """`transformers`' LengthGroupedSampler: megabatches of 50 batches sorted longest first."""
    mega = batch * 50
    order = [i for k in range(0, len(order), mega) for i in sorted(order[k:k + mega], key=lambda i: -lengths[i])]
    batches = [order[k:k + batch] for k in range(0, len(order), batch)]
    short = [batches.pop()] if len(batches[-1]) < batch else []
    rng.shuffle(batches)
    return [i for b in batches + short for i in b]


def normalize_answer(s):
    s = s.lower()
    s = "".join(ch for ch in s if ch not in set(string.punctuation))
    s = re.sub(r"\b(a|an|the)\b", " ", s)
    return " ".join(s.split())


def f1_score(prediction, gold):
    p, g = normalize_answer(prediction).split(), normalize_answer(gold).split()
    common = collections.Counter(p) & collections.Counter(g)
    same = sum(common.values())
    if same == 0:
        return 0.0
    precision, recall = same / len(p), same / len(g)
    return 2 * precision * recall / (precision + recall)


def predict(model, items, wins, n_best=20, max_answer=30, batch=64):
    model.eval()
    best = {}
    with torch.no_grad():
        for k in range(0, len(wins), batch):
            chunk = wins[k:k + batch]
            out = model(**pad_batch(chunk))
            for w, starts, ends in zip(chunk, out.start_logits.tolist(), out.end_logits.tolist()):
                offsets, context = w["offsets"], items[w["question"]]["context"]
                top = lambda v: sorted((t for t in range(len(offsets)) if offsets[t] is not None), key=lambda t: -v[t])[:n_best]
                for s in top(starts):
                    for e in top(ends):
                        if e < s or e - s + 1 > max_answer:
                            continue
                        score = starts[s] + ends[e]
                        if w["question"] not in best or score > best[w["question"]][0]:
                            best[w["question"]] = (score, context[offsets[s][0]:offsets[e][1]])
    model.train()
    return [best.get(i, (0.0, ""))[1] for i in range(len(items))]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("train")
    ap.add_argument("dev")
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--lr", type=float, default=5e-5)
    ap.add_argument("--warmup", type=float, default=0.1)
    ap.add_argument("--window", type=int, default=192)
    ap.add_argument("--stride", type=int, default=64)
    ap.add_argument("--train-questions", type=int)
    ap.add_argument("--dev-questions", type=int)
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--head-dropout", type=float, default=0.0)
    ap.add_argument("--group-by-length", action="store_true")
    ap.add_argument("--mask-padding", action="store_true")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    rng = random.Random(args.seed)

    tok = AutoTokenizer.from_pretrained(args.model)
    model = AutoModelForQuestionAnswering.from_pretrained(args.model)
    if args.head_dropout > 0:
        model.qa_outputs = torch.nn.Sequential(torch.nn.Dropout(args.head_dropout), model.qa_outputs)
    train_items, dev_items = read_squad(args.train, args.train_questions), read_squad(args.dev, args.dev_questions)
    train, dev = windows(tok, train_items, args.window, args.stride), windows(tok, dev_items, args.window, args.stride)
    no_answer = sum(1 for w in train if w["start"] == 0)
    print(f"{len(train_items)} training questions in {len(train)} windows ({no_answer} without the answer), "
          f"{len(dev_items)} dev questions in {len(dev)} windows; window {args.window}, stride {args.stride}")

    params = list(model.named_parameters())
    no_decay = lambda n: "bias" in n or "LayerNorm" in n
    opt = torch.optim.AdamW(
        [
            {"params": [p for n, p in params if not no_decay(n)], "weight_decay": 0.01},
            {"params": [p for n, p in params if no_decay(n)], "weight_decay": 0.0},
        ],
        lr=args.lr,
        eps=1e-8,
    )
    total = (len(train) + args.batch - 1) // args.batch * args.epochs
    warmup = round(total * args.warmup)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: (s + 1) / warmup if s < warmup else max(0.0, (total - s) / max(1, total - warmup)))
    lengths = [len(w["input_ids"]) for w in train]
    model.train()
    start = time.perf_counter()
    for epoch in range(args.epochs):
        order = list(range(len(train)))
        rng.shuffle(order)
        if args.group_by_length:
            order = grouped(order, lengths, args.batch, rng)
        losses = []
        for k in range(0, len(order), args.batch):
            batch = [train[i] for i in order[k:k + args.batch]]
            inputs = pad_batch(batch)
            starts, ends = torch.tensor([w["start"] for w in batch]), torch.tensor([w["end"] for w in batch])
            if args.mask_padding:
                out = model(**inputs)
                padding = inputs["attention_mask"] == 0
                ce = torch.nn.functional.cross_entropy
                loss = (ce(out.start_logits.masked_fill(padding, -1e4), starts)
                        + ce(out.end_logits.masked_fill(padding, -1e4), ends)) / 2
            else:
                loss = model(**inputs, start_positions=starts, end_positions=ends).loss
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            sched.step()
            losses.append(loss.item())
        print(f"epoch {epoch + 1}: mean training loss {sum(losses) / len(losses):.4f} over {len(losses)} steps")
    trained = time.perf_counter() - start
    pred = predict(model, dev_items, dev)
    em = sum(max(float(normalize_answer(p) == normalize_answer(a)) for a, _ in q["answers"]) for p, q in zip(pred, dev_items))
    f1 = sum(max(f1_score(p, a) for a, _ in q["answers"]) for p, q in zip(pred, dev_items))
    n = len(dev_items)
    print(f"PyTorch {torch.__version__}, {args.threads} threads: exact match {100 * em / n:.1f}, F1 {100 * f1 / n:.1f} "
          f"on {n} questions; {total} steps of batch {args.batch}, training {trained:.0f} s")


if __name__ == "__main__":
    main()
