#!/usr/bin/env python3
"""The PyTorch reference for inference on a GPU (bench/gpu.sh): embeds the same texts as
`bertbench bench` in the same batches and reports sentences/s.

    python3 scripts/bench_pytorch_gpu.py MODEL_DIR DATA.tsv [--n 256] [--batch 32] [--max-len 64]
        [--device cuda|cpu] [--passes 5] [--order length|input]

The first N sentences of DATA.tsv (first column, after the header), mean pooling over the
attention mask, fp32 weights and fp32 arithmetic (TF32 off for matrix products and cuDNN).
Batches as `bertbench bench` makes them (`--order length`, the default): sentences sorted by
token count, shortest first (a stable sort, `tokenizer::by_length`), cut into batches of
`--batch`, each padded to its longest; `--order input` batches them in file order instead. Each
pass tokenizes, runs the encoder, pools and copies the vectors to the host, as ours does; one
warm-up pass, then `--passes` timed passes, each ended by torch.cuda.synchronize() on a GPU.
Prints a sentence, then one JSON line (`bench/gpu.sh` reads the last line): the best and median
pass in sentences/s, the token counts and what ran. Needs torch and transformers.
"""
import argparse
import json
import statistics
import time

import torch
from transformers import AutoModel, AutoTokenizer


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("data")
    ap.add_argument("--n", type=int, default=256)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--max-len", type=int, default=64)
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--passes", type=int, default=5)
    ap.add_argument("--order", choices=["length", "input"], default="length")
    ap.add_argument("--threads", type=int, default=0, help="CPU threads (0: PyTorch's default)")
    args = ap.parse_args()

    if args.device.startswith("cuda") and not torch.cuda.is_available():
        raise SystemExit("torch.cuda.is_available() is False")
    device = torch.device(args.device)
    if device.type == "cpu" and args.threads:
        torch.set_num_threads(args.threads)
    # fp32 means fp32: no TF32 in matrix products (PyTorch's default since 1.12, said again here).
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.set_float32_matmul_precision("highest")

    with open(args.data, encoding="utf-8") as f:
        texts = [line.rstrip("\n").split("\t")[0] for line in f.readlines()[1:] if line.strip()][: args.n]
    tok = AutoTokenizer.from_pretrained(args.model)
    model = AutoModel.from_pretrained(args.model, dtype=torch.float32).to(device).eval()

    lengths = [len(ids) for ids in tok(texts, truncation=True, max_length=args.max_len)["input_ids"]]
    order = sorted(range(len(texts)), key=lambda i: lengths[i]) if args.order == "length" else list(range(len(texts)))
    batches = [[texts[i] for i in order[b : b + args.batch]] for b in range(0, len(order), args.batch)]

    def sync():
        if device.type == "cuda":
            torch.cuda.synchronize(device)

    @torch.inference_mode()
    def run_pass():
        out = []
        for chunk in batches:
            enc = tok(chunk, padding=True, truncation=True, max_length=args.max_len, return_tensors="pt").to(device)
            h = model(**enc).last_hidden_state
            m = enc["attention_mask"].unsqueeze(-1).to(h.dtype)
            out.append(((h * m).sum(1) / m.sum(1)).cpu())
        sync()
        return torch.cat(out)

    run_pass()  # warm-up: cuBLAS handles, kernel selection, every batch shape once
    times = []
    for _ in range(args.passes):
        sync()
        t = time.perf_counter()
        vectors = run_pass()
        times.append(time.perf_counter() - t)
    assert vectors.shape[0] == len(texts) and torch.isfinite(vectors).all()

    best, median = len(texts) / min(times), len(texts) / statistics.median(times)
    name = torch.cuda.get_device_name(device) if device.type == "cuda" else f"CPU, {torch.get_num_threads()} threads"
    padded = sum(max(lengths[i] for i in order[b : b + args.batch]) * len(order[b : b + args.batch]) for b in range(0, len(order), args.batch))
    print(f"PyTorch {torch.__version__} on {name}: {len(texts)} sentences, batch {args.batch}, max length {args.max_len}, "
          f"{args.order} order: best pass {best:.1f} sentences/s, median {median:.1f} over {args.passes} passes")
    print(json.dumps({
        "sentences_per_s": best,
        "median_sentences_per_s": median,
        "passes": args.passes,
        "sentences": len(texts),
        "tokens": sum(lengths),
        "padded_tokens": padded,
        "torch": torch.__version__,
        "device": name,
        "attention": getattr(model.config, "_attn_implementation", "unknown"),
        "tf32": torch.backends.cuda.matmul.allow_tf32,
    }))


if __name__ == "__main__":
    main()
