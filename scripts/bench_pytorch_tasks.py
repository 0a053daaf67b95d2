#!/usr/bin/env python3
"""The PyTorch reference for `bertbench finetune` on the tasks besides question answering
(`bench_pytorch_qa.py` has that one): the same recipe, the same data, the same metric, on the
same cores, so the real-data benchmark (`bench/real_data.mjs`) can put them side by side.

    python3 scripts/bench_pytorch_tasks.py --task tag|similarity-bi|similarity-cross|pairs \\
        MODEL_DIR TRAIN EVAL [--mode full|head] [--epochs 2] [--batch 32] [--lr 5e-5]
        [--max-len 64] [--seed 42] [--threads 2] [--no-group-by-length] [--score-range 0,5]

What each task is, as bertbench's core builds it (`core/src/train/finetune/task/*.rs`):

- `tag`: CoNLL columns (the first is the word, the last its tag; `-DOCSTART-` lines and blank
  lines end sentences), an `I-X` that starts an entity repaired to `B-X` (IOB1 → IOB2, as
  bertbench's reader does), each word's tag learned and predicted at its first piece (dropout
  0.1, then a linear layer on that token's last hidden state; the loss is the mean cross-entropy
  of the batch's first pieces). Words past `--max-len` are neither learned nor scored, as in
  bertbench (the count is printed). Scored by seqeval's entity F1 (default mode, micro average).
- `similarity-bi`: each text alone, mean-pooled over its tokens, through a dense layer
  hidden → hidden that starts at the identity (no activation, no dropout), scored by the cosine
  of the two vectors; the loss is its squared error against the score scaled to 0..1
  (`--score-range`, STS-B's 0–5), sentence-transformers' `CosineSimilarityLoss`. Spearman and
  Pearson correlations of the cosines with the gold scores.
- `similarity-cross`: the pair read together (`[CLS] a [SEP] b [SEP]`, longest-first
  truncation), mean-pooled, dropout 0.1, a linear layer to one number; the loss is its squared
  error against the scaled score (transformers' regression). Spearman and Pearson.
- `pairs`: a label per pair of texts (MRPC's `#1 String`, `#2 String`, `Quality`), read together,
  mean-pooled, dropout 0.1, a linear layer per label, cross-entropy. Accuracy and the F1 of label
  `1` (MRPC's "paraphrase", GLUE's F1).

Tables are TSV read as GLUE's loaders read them (`csv.QUOTE_NONE`: a quote is text) with a
header naming the columns (`sentence1`/`#1 String`, `sentence2`/`#2 String`,
`score`/`Quality`/`label`), or JSON Lines with those keys. New heads start as transformers'
`_init_weights` starts them (normal, σ = the config's `initializer_range`, zero bias).

The recipe: `--mode full` trains every weight: AdamW (ε 1e-8, weight decay 0.01 except biases
and LayerNorm), `--lr` after a linear warmup over 10 % of the steps, then linear decay to 0,
gradients clipped at norm 1, batches of similar length grouped as `LengthGroupedSampler` does
(megabatches of 50 batches; `--no-group-by-length` shuffles only), as bertbench's full
fine-tuning does by default. `--mode head` freezes the encoder: its features (no dropout) are
computed once and only the head trains, with the same optimizer and schedule at `--lr` for
`--epochs` (bertbench's head-only recipe is 20 epochs at 5e-3, batch 32). Both evaluate on EVAL
after each epoch; the last line, `RESULT {...}`, holds the last epoch's scores (×100) and the
seconds from the start of training to the end of the last evaluation. Needs torch, transformers,
seqeval and scipy.
"""
import argparse
import csv
import json
import random
import time

import torch
from transformers import AutoModel, AutoTokenizer

from bench_pytorch_qa import grouped
from qa_windows import pad_batch

TEXT, PAIR, LABEL = ("sentence1", "#1 String"), ("sentence2", "#2 String"), ("score", "Quality", "label")


# ---------------------------------------------------------------------------------------------
# Data.

def read_conll(path):
    """Sentences of (words, tags) from CoNLL columns, IOB1 repaired to IOB2; and the repairs."""
    sentences, words, tags, repairs = [], [], [], 0

    def end():
        nonlocal words, tags, repairs
        if words:
            for i, t in enumerate(tags):
                if t.startswith("I-") and (i == 0 or tags[i - 1][2:] != t[2:] or tags[i - 1] == "O"):
                    tags[i] = "B-" + t[2:]
                    repairs += 1
            sentences.append((words, tags))
        words, tags = [], []

    for line in open(path, encoding="utf-8"):
        cols = line.split()
        if not cols or cols[0] == "-DOCSTART-":
            end()
            continue
        words.append(cols[0])
        tags.append(cols[-1])
    end()
    return sentences, repairs


def read_table(path):
    """Rows of a TSV with a header (quotes as text) or of JSON Lines, as dicts."""
    if path.endswith(".jsonl"):
        return [json.loads(l) for l in open(path, encoding="utf-8") if l.strip()]
    with open(path, newline="", encoding="utf-8-sig") as f:
        rows = list(csv.reader(f, delimiter="\t", quoting=csv.QUOTE_NONE))
    return [dict(zip(rows[0], r)) for r in rows[1:] if r]


def column(row, names):
    for n in names:
        if n in row:
            return row[n]
    raise SystemExit(f"none of the columns {names} in {sorted(row)}")


def read_pairs(path):
    return [(column(r, TEXT), column(r, PAIR), str(column(r, LABEL))) for r in read_table(path)]


# ---------------------------------------------------------------------------------------------
# Examples: what the encoder reads and what is scored.

def encode_tagged(tok, sentences, tags, max_len):
    """Each sentence's encoding, the positions of its kept words' first pieces and their tag ids;
    and how many words the length cut off."""
    out, cut = [], 0
    for words, word_tags in sentences:
        enc = tok(words, is_split_into_words=True, truncation=True, max_length=max_len)
        ids = enc.word_ids()
        first = [i for i, w in enumerate(ids) if w is not None and (i == 0 or ids[i - 1] != w)]
        kept = [ids[i] for i in first]
        cut += len(words) - len(kept)
        out.append({"input_ids": enc["input_ids"], "token_type_ids": enc["token_type_ids"], "positions": first,
                    "labels": [tags.index(word_tags[w]) for w in kept], "tags": [word_tags[w] for w in kept]})
    return out, cut


def encode_pairs(tok, pairs, task, max_len, labels, scale):
    low, high = scale
    out = []
    for a, b, y in pairs:
        target = labels.index(y) if task == "pairs" else (float(y) - low) / (high - low)
        if task == "similarity-bi":
            ea, eb = tok(a, truncation=True, max_length=max_len), tok(b, truncation=True, max_length=max_len)
            out.append({"first": {k: ea[k] for k in ("input_ids", "token_type_ids")},
                        "second": {k: eb[k] for k in ("input_ids", "token_type_ids")}, "target": target})
        else:
            e = tok(a, b, truncation=True, max_length=max_len)
            out.append({"input_ids": e["input_ids"], "token_type_ids": e["token_type_ids"], "target": target})
    return out


def length(x):
    return max(len(x["first"]["input_ids"]), len(x["second"]["input_ids"])) if "first" in x else len(x["input_ids"])


# ---------------------------------------------------------------------------------------------
# The model: the encoder and the task's head.

def linear(n_in, n_out, std):
    layer = torch.nn.Linear(n_in, n_out)
    torch.nn.init.normal_(layer.weight, std=std)
    torch.nn.init.zeros_(layer.bias)
    return layer


def mean_pool(hidden, mask):
    m = mask.unsqueeze(-1).to(hidden.dtype)
    return (hidden * m).sum(1) / m.sum(1)


class Model(torch.nn.Module):
    def __init__(self, path, task, outputs):
        super().__init__()
        self.task = task
        self.encoder = AutoModel.from_pretrained(path)
        hidden, std = self.encoder.config.hidden_size, self.encoder.config.initializer_range
        if task == "similarity-bi":
            self.head = torch.nn.Linear(hidden, hidden)
            with torch.no_grad():
                self.head.weight.copy_(torch.eye(hidden))
                self.head.bias.zero_()
            self.dropout = torch.nn.Identity()
        else:
            self.head = linear(hidden, outputs, std)
            self.dropout = torch.nn.Dropout(0.1)

    def features(self, batch):
        """What the head reads: each kept word's first piece (`tag`), or each sequence's mean."""
        h = self.encoder(**pad_batch(batch)).last_hidden_state
        if self.task == "tag":
            return torch.cat([h[r, x["positions"]] for r, x in enumerate(batch)])
        return mean_pool(h, pad_batch(batch)["attention_mask"])

    def outputs(self, feats):
        """The units' outputs from their features: logits, a score, or a pair's cosine (the
        features of a bi-encoder batch are its first texts', then its second texts')."""
        out = self.head(self.dropout(feats))
        if self.task == "similarity-bi":
            n = out.shape[0] // 2
            return torch.nn.functional.cosine_similarity(out[:n], out[n:])
        return out.squeeze(-1) if self.task == "similarity-cross" else out

    def unit_features(self, batch):
        if self.task == "similarity-bi":
            return self.features([x["first"] for x in batch] + [x["second"] for x in batch])
        return self.features(batch)


def targets(task, batch):
    if task == "tag":
        return torch.tensor([y for x in batch for y in x["labels"]])
    if task == "pairs":
        return torch.tensor([x["target"] for x in batch])
    return torch.tensor([x["target"] for x in batch], dtype=torch.float32)


def loss_of(task, out, y):
    if task in ("tag", "pairs"):
        return torch.nn.functional.cross_entropy(out, y)
    return torch.nn.functional.mse_loss(out, y)


def bi_order(task, feats):
    """A bi-encoder's cached features are stored by pair (first, second): as `outputs` wants."""
    return torch.cat([feats[0::2], feats[1::2]]) if task == "similarity-bi" else feats


# ---------------------------------------------------------------------------------------------
# Scores.

def score(task, out, examples, labels):
    """The task's metrics (×100) of the evaluation set's outputs, the first its headline."""
    if task == "tag":
        from seqeval.metrics import f1_score, precision_score, recall_score
        pred, k = [], 0
        for x in examples:
            pred.append([labels[i] for i in out[k:k + len(x["tags"])].argmax(-1).tolist()])
            k += len(x["tags"])
        truth = [x["tags"] for x in examples]
        return {"entity F1": 100 * f1_score(truth, pred), "precision": 100 * precision_score(truth, pred),
                "recall": 100 * recall_score(truth, pred)}
    if task == "pairs":
        pred, gold = out.argmax(-1).tolist(), [x["target"] for x in examples]
        pos = labels.index("1")
        tp = sum(p == pos and g == pos for p, g in zip(pred, gold))
        precision = tp / max(1, sum(p == pos for p in pred))
        recall = tp / max(1, sum(g == pos for g in gold))
        f1 = 2 * precision * recall / (precision + recall) if tp else 0.0
        return {"accuracy": 100 * sum(p == g for p, g in zip(pred, gold)) / len(gold), "F1 of 1": 100 * f1}
    from scipy.stats import pearsonr, spearmanr
    gold = [x["target"] for x in examples]
    return {"Spearman": 100 * spearmanr(out.tolist(), gold).statistic, "Pearson": 100 * pearsonr(out.tolist(), gold).statistic}


# ---------------------------------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--task", required=True, choices=["tag", "similarity-bi", "similarity-cross", "pairs"])
    ap.add_argument("model")
    ap.add_argument("train")
    ap.add_argument("eval")
    ap.add_argument("--mode", default="full", choices=["full", "head"])
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--lr", type=float, default=5e-5)
    ap.add_argument("--warmup", type=float, default=0.1)
    ap.add_argument("--max-len", type=int, default=64)
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--no-group-by-length", action="store_true")
    ap.add_argument("--score-range", default="0,5", help="the similarity scores' low and high ends, read as 0 and 1")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    rng = random.Random(args.seed)
    task = args.task
    tok = AutoTokenizer.from_pretrained(args.model)

    if task == "tag":
        (train_sents, repaired), (eval_sents, eval_repaired) = read_conll(args.train), read_conll(args.eval)
        labels = sorted({t for _, tags in train_sents for t in tags})
        train, cut = encode_tagged(tok, train_sents, labels, args.max_len)
        evals, eval_cut = encode_tagged(tok, eval_sents, labels, args.max_len)
        print(f"{len(train)} training / {len(evals)} evaluation sentences, tags {labels}; "
              f"{repaired} + {eval_repaired} I- tags repaired to B-; {cut} training and {eval_cut} evaluation words "
              f"past {args.max_len} tokens (neither learned nor scored)")
    else:
        train_pairs, eval_pairs = read_pairs(args.train), read_pairs(args.eval)
        labels = sorted({y for _, _, y in train_pairs}) if task == "pairs" else ["score"]
        scale = tuple(float(v) for v in args.score_range.split(","))
        train = encode_pairs(tok, train_pairs, task, args.max_len, labels, scale)
        evals = encode_pairs(tok, eval_pairs, task, args.max_len, labels, scale)
        print(f"{len(train)} training / {len(evals)} evaluation pairs, labels {labels}")

    model = Model(args.model, task, len(labels))
    head_only = args.mode == "head"
    trained = list(model.head.named_parameters()) if head_only else list(model.named_parameters())
    no_decay = lambda n: "bias" in n or "LayerNorm" in n
    opt = torch.optim.AdamW(
        [
            {"params": [p for n, p in trained if not no_decay(n)], "weight_decay": 0.01},
            {"params": [p for n, p in trained if no_decay(n)], "weight_decay": 0.0},
        ],
        lr=args.lr,
        eps=1e-8,
    )
    per_epoch = (len(train) + args.batch - 1) // args.batch
    total = per_epoch * args.epochs
    warmup = round(total * args.warmup)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: (s + 1) / warmup if s < warmup else max(0.0, (total - s) / max(1, total - warmup)))

    start = time.perf_counter()
    if head_only:
        # The frozen encoder's features, once, without dropout: a row per unit (a bi-encoder's
        # two texts one after the other).
        model.encoder.eval()
        with torch.no_grad():
            def cached(examples):
                rows = []
                for k in range(0, len(examples), 64):
                    chunk = examples[k:k + 64]
                    f = model.unit_features(chunk)
                    if task == "similarity-bi":
                        n = len(chunk)
                        f = torch.stack([f[:n], f[n:]], 1).reshape(2 * n, -1)
                    rows.append(f)
                return torch.cat(rows)
            train_feats, eval_feats = cached(train), cached(evals)
        units = [len(x["labels"]) if task == "tag" else (2 if task == "similarity-bi" else 1) for x in train]
        starts = [0]
        for u in units:
            starts.append(starts[-1] + u)

    def evaluate():
        model.eval()
        with torch.no_grad():
            if head_only:
                out = model.outputs(bi_order(task, eval_feats))
            else:
                out = torch.cat([model.outputs(model.unit_features(evals[k:k + 64])) for k in range(0, len(evals), 64)])
        model.train()
        if head_only:
            model.encoder.eval()
        return score(task, out, evals, labels)

    lengths = [length(x) for x in train]
    model.train()
    if head_only:
        model.encoder.eval()
    result = None
    for epoch in range(args.epochs):
        order = list(range(len(train)))
        rng.shuffle(order)
        if not head_only and not args.no_group_by_length:
            order = grouped(order, lengths, args.batch, rng)
        losses = []
        for k in range(0, len(order), args.batch):
            idx = order[k:k + args.batch]
            batch = [train[i] for i in idx]
            if head_only:
                rows = torch.tensor([r for i in idx for r in range(starts[i], starts[i + 1])])
                out = model.outputs(bi_order(task, train_feats[rows]))
            else:
                out = model.outputs(model.unit_features(batch))
            loss = loss_of(task, out, targets(task, batch))
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_([p for _, p in trained], 1.0)
            opt.step()
            sched.step()
            losses.append(loss.item())
        result = evaluate()
        scores = ", ".join(f"{k} {v:.2f}" for k, v in result.items())
        print(f"epoch {epoch + 1}: mean training loss {sum(losses) / len(losses):.4f} over {len(losses)} steps; {scores}", flush=True)
    seconds = time.perf_counter() - start
    print(f"PyTorch {torch.__version__}, {args.threads} threads, {task}, {args.mode}: {total} steps of batch {args.batch}, "
          f"{seconds:.1f} s with the evaluations")
    print("RESULT " + json.dumps({"task": task, "mode": args.mode, "seed": args.seed, "score": list(result.values()),
                                   "metrics": result, "seconds": round(seconds, 1)}))


if __name__ == "__main__":
    main()
