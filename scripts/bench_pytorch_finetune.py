#!/usr/bin/env python3
"""The PyTorch reference for the fine-tuning benchmark: the same recipe as
`bertbench finetune`, on the same machine, so the two can be compared in one sitting.

    python3 scripts/bench_pytorch_finetune.py MODEL_DIR TRAIN.tsv DEV.tsv [--steps N] [--full] [--max-len 64] [--device cuda]

Full fine-tuning of all-MiniLM-L6-v2 with mean pooling + a linear head, AdamW (lr 5e-5, weight
decay 0.01 except biases/LayerNorm), batch 16, max length 64 (`--max-len`), linear decay, clip at norm 1, on
2 CPU threads. Prints the mean step time over `--steps` steps after 2 warm-up steps; with
`--full`, trains 2 epochs and prints the dev accuracy too. `--device cuda` runs the same recipe on
the GPU instead (fp32, TF32 off; each timed step ends with torch.cuda.synchronize(); bench/gpu.sh
uses it). Needs torch and transformers.
"""
import argparse
import csv
import random
import time

import torch
from transformers import AutoModel, AutoTokenizer


def read(path):
    with open(path, newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f, delimiter="\t", quoting=csv.QUOTE_NONE))
    return [(r[0], int(r[1])) for r in rows[1:]]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("train")
    ap.add_argument("dev")
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--full", action="store_true")
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--max-len", type=int, default=64)
    ap.add_argument("--device", default="cpu")
    args = ap.parse_args()
    device = torch.device(args.device)
    if device.type == "cpu":
        torch.set_num_threads(2)
    else:
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
    torch.manual_seed(42)
    random.seed(42)
    tok = AutoTokenizer.from_pretrained(args.model)
    enc = AutoModel.from_pretrained(args.model)
    head = torch.nn.Linear(enc.config.hidden_size, 2)
    if device.type != "cpu":
        enc, head = enc.to(device=device, dtype=torch.float32), head.to(device)
    drop = torch.nn.Dropout(0.1)
    train, dev = read(args.train), read(args.dev)

    def logits(texts):
        b = tok(texts, padding=True, truncation=True, max_length=args.max_len, return_tensors="pt")
        if device.type != "cpu":
            b = b.to(device)
        h = enc(**b).last_hidden_state
        m = b["attention_mask"].unsqueeze(-1).float()
        return head(drop((h * m).sum(1) / m.sum(1)))

    params = list(enc.named_parameters()) + [("head." + n, p) for n, p in head.named_parameters()]
    no_decay = lambda n: "bias" in n or "LayerNorm" in n
    opt = torch.optim.AdamW(
        [
            {"params": [p for n, p in params if not no_decay(n)], "weight_decay": 0.01},
            {"params": [p for n, p in params if no_decay(n)], "weight_decay": 0.0},
        ],
        lr=5e-5,
        eps=1e-8,
    )
    epochs = 2 if args.full else 1
    batches_per_epoch = (len(train) + args.batch - 1) // args.batch
    total = batches_per_epoch * epochs
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: max(0.0, (total - s) / total))
    times = []
    step = 0
    for _ in range(epochs):
        order = list(range(len(train)))
        random.shuffle(order)
        for i in range(0, len(order), args.batch):
            batch = [train[j] for j in order[i : i + args.batch]]
            enc.train()
            start = time.perf_counter()
            labels = torch.tensor([y for _, y in batch])
            if device.type != "cpu":
                labels = labels.to(device)
            loss = torch.nn.functional.cross_entropy(logits([t for t, _ in batch]), labels)
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_([p for _, p in params], 1.0)
            opt.step()
            sched.step()
            if device.type == "cuda":
                torch.cuda.synchronize(device)
            times.append(time.perf_counter() - start)
            step += 1
            if not args.full and step >= args.steps + 2:
                break
        if not args.full and step >= args.steps + 2:
            break
    timed = times[2:]
    where = "2 threads" if device.type == "cpu" else torch.cuda.get_device_name(device) if device.type == "cuda" else str(device)
    print(f"PyTorch {torch.__version__}, {where}: full fine-tune step (batch {args.batch}, length {args.max_len}) "
          f"{sum(timed) / len(timed):.3f} s mean over {len(timed)} steps")
    if args.full:
        enc.eval()
        drop.eval()
        correct = 0
        with torch.no_grad():
            for i in range(0, len(dev), 64):
                chunk = dev[i : i + 64]
                pred = logits([t for t, _ in chunk]).argmax(-1).cpu()
                correct += sum(int(p == y) for p, (_, y) in zip(pred.tolist(), chunk))
        print(f"dev accuracy {100 * correct / len(dev):.2f}% after 2 epochs")


if __name__ == "__main__":
    main()
