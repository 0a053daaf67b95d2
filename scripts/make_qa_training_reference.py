#!/usr/bin/env python3
"""What PyTorch `transformers` computes while it fine-tunes a question-answering model, for
`core/tests/qa_training.rs` to hold bertbench's training to.

    python3 scripts/make_qa_training_reference.py tests/models

writes `tests/models/qa-training/`: a tiny random `BertForQuestionAnswering` (2 layers, 32 wide,
its `qa_outputs` included, so both sides start from the same head), its uncased vocabulary,
`questions.json` (SQuAD v1.1 JSON: passages longer than a window, answers in the first, second
or last window, and in none whole) and `reference.json`:

- `windows`: each question's windows as `transformers`' `run_qa.py` makes them (question, then
  the passage with `truncation="only_second"`, `max_length` WINDOW, `stride` STRIDE): ids,
  segment ids and the answer's start and end tokens, `(0, 0)` (`[CLS]`) where the window does
  not hold the whole first answer;
- `batch`: one forward and backward pass over every window, in training mode with dropout off:
  the start and end logits, the loss (CE(start) + CE(end)) / 2 and every parameter's gradient
  by its `transformers` name;
- `steps`: STEPS optimizer steps on that batch, as `run_qa.py`'s `Trainer` takes them: AdamW
  (eps 1e-8, weight decay except on biases and LayerNorm: WEIGHT_DECAY, larger than the
  recipe's 0.01 so that which parameters decay shows), linear warmup over WARMUP of the steps
  (the first step at the full rate / warmup, as bertbench's schedule counts) then linear decay,
  gradients clipped at norm 1; each step's loss, gradient norm before clipping, and learning
  rate;
- `dropout`: with dropout 0.1 on (embeddings, attention probabilities, hidden states), the
  mean and standard deviation of the loss over DRAWS draws of the masks at the initial weights.

and `tests/models/qa-training-modernbert/`, the same for a tiny `ModernBertForQuestionAnswering`
(its `head`, dense → GELU → LayerNorm with biases, before `classifier` on every token; a global
and a local layer; no segments), without `dropout` (ModernBERT has none by default).

Padding: a batch pads each window to the longest, and the logits of padding are left out of the
softmax (`transformers` pads every window to `max_length` and keeps them in; a window as long
as the batch, the usual case at length 384, reads the same either way). Needs torch and
transformers; no download.
"""
import copy
import json
import math
import os
import shutil
import sys

import torch
import transformers
from transformers import BertConfig, BertForQuestionAnswering, BertTokenizerFast, ModernBertConfig, ModernBertForQuestionAnswering

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_test_models import jitter, write_vocab  # noqa: E402
from qa_windows import answer_tokens, pad_batch  # noqa: E402

WINDOW = 24
STRIDE = 6
STEPS = 6
LR = 2e-3
WARMUP = 0.2
# The recipe's decay is 0.01; 1.0 makes which parameters decay (not biases and LayerNorm) show
# in six steps' losses.
WEIGHT_DECAY = 1.0
DRAWS = 400

PASSAGES = [
    # (passage, [(question, answer, which occurrence of the answer)])
    ("the quick brown fox jumps over the lazy dog near paris . we had a picnic on the river bank . "
     "i deposited the cheque at the bank in london . alice and bob saw the movie .",
     [("where is the dog?", "paris", 0), ("what did alice see?", "the movie", 0), ("who jumps?", "the quick brown fox", 0)]),
    ("hello world , said alice to bob in london . the plot was terrible and the actors were great . "
     "how old are you ? what is your age ?",
     [("who said hello?", "alice", 0), ("what was terrible?", "the plot", 0)]),
    ("the movie was wonderful .",
     [("how was the movie?", "wonderful", 0)]),
]


def vocab():
    words = sorted({w for p, qs in PASSAGES for w in (p + " " + " ".join(q for q, _, _ in qs)).replace("?", " ? ").split()})
    chars = sorted({c for w in words for c in w} | set("abcdefghijklmnopqrstuvwxyz"))
    pieces = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + chars + ["##" + c for c in chars] + words
    return list(dict.fromkeys(pieces))


def squad():
    paragraphs = []
    for i, (context, qas) in enumerate(PASSAGES):
        rows = []
        for j, (question, answer, nth) in enumerate(qas):
            start = -1
            for _ in range(nth + 1):
                start = context.index(answer, start + 1)
            rows.append({"id": f"q{i}-{j}", "question": question, "answers": [{"text": answer, "answer_start": start}]})
        paragraphs.append({"context": context, "qas": rows})
    return {"version": "1.1", "data": [{"title": "toy", "paragraphs": paragraphs}]}


def windows(tok, items):
    """`run_qa.py`'s `prepare_train_features`."""
    enc = tok([q["question"].lstrip() for q in items], [q["context"] for q in items], truncation="only_second",
              max_length=WINDOW, stride=STRIDE, return_overflowing_tokens=True, return_offsets_mapping=True)
    out = []
    for i, ids in enumerate(enc["input_ids"]):
        item = items[enc["overflow_to_sample_mapping"][i]]
        seq, offsets = enc.sequence_ids(i), enc["offset_mapping"][i]
        answer = item["answers"][0]
        char, char_end = answer["answer_start"], answer["answer_start"] + len(answer["text"])
        first = seq.index(1)
        last = len(seq) - 1 - seq[::-1].index(1)
        start, end = answer_tokens(offsets, first, last, char, char_end)
        out.append({"question": item["id"], "input_ids": ids, "token_type_ids": enc["token_type_ids"][i],
                    "start": start, "end": end})
    return out


def loss_of(model, inputs, starts, ends):
    out = model(**inputs)
    padding = inputs["attention_mask"] == 0
    start_logits = out.start_logits.masked_fill(padding, -1e4)
    end_logits = out.end_logits.masked_fill(padding, -1e4)
    ce = torch.nn.functional.cross_entropy
    return (ce(start_logits, starts) + ce(end_logits, ends)) / 2, start_logits, end_logits


def main():
    models = sys.argv[1] if len(sys.argv) > 1 else "tests/models"
    pieces = vocab()
    bert = BertConfig(vocab_size=len(pieces), hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                      intermediate_size=64, max_position_embeddings=64)
    # ModernBERT's class applies its `head` (dense, GELU, LayerNorm; biases on, so that their
    # decay shows) to every token before `classifier`; no dropout (its defaults); one global and
    # one local layer (a window of 8, shorter than the windows).
    modern = ModernBertConfig(vocab_size=len(pieces), hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                              intermediate_size=48, max_position_embeddings=64, local_attention=8,
                              global_attn_every_n_layers=2, pad_token_id=0, cls_token_id=2, sep_token_id=3,
                              bos_token_id=2, eos_token_id=3, classifier_bias=True, norm_bias=True)
    reference(os.path.join(models, "qa-training"), BertForQuestionAnswering, bert, pieces, dropout=True)
    reference(os.path.join(models, "qa-training-modernbert"), ModernBertForQuestionAnswering, modern, pieces, dropout=False)


def reference(out, model_class, config, pieces, dropout):
    """The model, tokenizer, questions and `reference.json` of one question-answering class."""
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    write_vocab(out, pieces)
    tok = BertTokenizerFast(os.path.join(out, "vocab.txt"), do_lower_case=True)
    torch.manual_seed(16)
    model = jitter(model_class(config))
    model.save_pretrained(out)
    tok.save_pretrained(out)
    data = squad()
    with open(os.path.join(out, "questions.json"), "w") as f:
        json.dump(data, f, indent=1)
    items = [dict(q, context=p["context"]) for p in data["data"][0]["paragraphs"] for q in p["qas"]]
    wins = windows(tok, items)
    assert len({len(w["input_ids"]) for w in wins}) > 1, "windows of different lengths: the batch pads"
    assert any(w["start"] == 0 for w in wins) and any(w["start"] > WINDOW // 2 for w in wins)
    inputs = pad_batch(wins)
    if not config.model_type == "bert":
        # A family without segments takes no segment ids.
        inputs.pop("token_type_ids")
    starts = torch.tensor([w["start"] for w in wins])
    ends = torch.tensor([w["end"] for w in wins])

    # Dropout off: one pass, logits, loss, gradients.
    quiet = copy.deepcopy(config)
    if dropout:
        quiet.hidden_dropout_prob = quiet.attention_probs_dropout_prob = 0.0
    off = model_class(quiet)
    off.load_state_dict(model.state_dict())
    off.train()
    loss, start_logits, end_logits = loss_of(off, inputs, starts, ends)
    loss.backward()
    lengths = [len(w["input_ids"]) for w in wins]
    batch = {
        "loss": loss.item(),
        "start_logits": [row[:n] for row, n in zip(start_logits.tolist(), lengths)],
        "end_logits": [row[:n] for row, n in zip(end_logits.tolist(), lengths)],
        "grads": {name: p.grad.flatten().tolist() for name, p in off.named_parameters() if p.grad is not None},
    }

    # The Trainer's steps on that batch.
    off.zero_grad()
    params = list(off.named_parameters())
    # The Trainer's: biases and LayerNorms (ModernBERT's are called `norm`, `attn_norm`…) keep
    # their values.
    norms = {f"{m}.{n}" if m else n for m, module in off.named_modules() if isinstance(module, torch.nn.LayerNorm) for n, _ in module.named_parameters()}
    no_decay = lambda n: "bias" in n or n in norms
    opt = torch.optim.AdamW([
        {"params": [p for n, p in params if not no_decay(n)], "weight_decay": WEIGHT_DECAY},
        {"params": [p for n, p in params if no_decay(n)], "weight_decay": 0.0},
    ], lr=LR, eps=1e-8)
    warmup = round(STEPS * WARMUP)
    schedule = lambda s: (s + 1) / warmup if s < warmup else (STEPS - s) / max(1, STEPS - warmup)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, schedule)
    steps = []
    for s in range(STEPS):
        lr = opt.param_groups[0]["lr"]
        loss, _, _ = loss_of(off, inputs, starts, ends)
        opt.zero_grad()
        loss.backward()
        norm = torch.nn.utils.clip_grad_norm_(off.parameters(), 1.0)
        opt.step()
        sched.step()
        steps.append({"loss": loss.item(), "grad_norm": norm.item(), "lr": lr})

    # Dropout on: the loss over many masks at the initial weights (a class without dropout: none).
    mean = std = None
    if dropout:
        model.train()
        torch.manual_seed(17)
        with torch.no_grad():
            draws = [loss_of(model, inputs, starts, ends)[0].item() for _ in range(DRAWS)]
        mean = sum(draws) / len(draws)
        std = math.sqrt(sum((d - mean) ** 2 for d in draws) / (len(draws) - 1))

    reference = {
        "transformers": transformers.__version__,
        "window": WINDOW,
        "stride": STRIDE,
        "windows": wins,
        "batch": batch,
        "steps": steps,
        "learning_rate": LR,
        "warmup_ratio": WARMUP,
        "weight_decay": WEIGHT_DECAY,
    }
    if dropout:
        reference["dropout"] = {"draws": DRAWS, "mean": mean, "std": std, "without": batch["loss"]}
    with open(os.path.join(out, "reference.json"), "w") as f:
        json.dump(reference, f)
    losses = " ".join("%.5f" % s["loss"] for s in steps)
    said = f"with dropout {mean:.4f} ± {std:.4f} (without {batch['loss']:.4f})" if dropout else "no dropout"
    print(f"{out}: {len(items)} questions in {len(wins)} windows; losses over {STEPS} steps {losses}; {said}")


if __name__ == "__main__":
    main()
