#!/usr/bin/env python3
"""Exports a BERT checkpoint folder to ONNX for transformers.js, from the same safetensors the
page loads, so the benchmark runs identical weights on both sides.

    python3 scripts/export_onnx.py MODEL_DIR OUT_DIR [--quantize-only]

Writes OUT_DIR/config.json, tokenizer.json, tokenizer_config.json and onnx/model.onnx (fp32,
inputs input_ids / attention_mask / token_type_ids with dynamic batch and length, output
last_hidden_state), the layout transformers.js reads. Checks the ONNX graph against PyTorch on
a padded batch. Then writes onnx/model_quantized.onnx, the file transformers.js loads for dtype
'q8' (its default in wasm), quantized as transformers.js's own conversion script quantizes a BERT
(see `quantize`); --quantize-only writes just that file from an existing onnx/model.onnx.
Needs torch, transformers, onnx, onnxscript and onnxruntime (onnxruntime alone with
--quantize-only, and transformers for the tokenizer).
"""
import json
import logging
import shutil
import sys
from pathlib import Path

import numpy as np
from transformers import AutoTokenizer

NAMES = ["input_ids", "attention_mask", "token_type_ids"]


def export(model_dir, out_dir, tok):
    import torch
    from transformers import AutoModel

    class Encoder(torch.nn.Module):
        def __init__(self, model):
            super().__init__()
            self.model = model

        def forward(self, input_ids, attention_mask, token_type_ids):
            return self.model(input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids).last_hidden_state

    (out_dir / "onnx").mkdir(parents=True, exist_ok=True)
    model = AutoModel.from_pretrained(model_dir, attn_implementation="eager").eval()
    batch = tok(["a short one", "a somewhat longer sentence for the padding"], padding=True, return_tensors="pt")
    args = (batch["input_ids"], batch["attention_mask"], batch["token_type_ids"])
    dims = {0: torch.export.Dim("batch"), 1: torch.export.Dim("sequence")}
    onnx_path = out_dir / "onnx" / "model.onnx"
    torch.onnx.export(
        Encoder(model).eval(),
        args,
        str(onnx_path),
        input_names=["input_ids", "attention_mask", "token_type_ids"],
        output_names=["last_hidden_state"],
        dynamic_shapes={"input_ids": dims, "attention_mask": dims, "token_type_ids": dims},
        dynamo=True,
        external_data=False,
    )
    shutil.copy(model_dir / "config.json", out_dir / "config.json")
    shutil.copy(model_dir / "tokenizer.json", out_dir / "tokenizer.json")
    config = {
        "tokenizer_class": "BertTokenizer",
        "do_lower_case": True,
        "model_max_length": 512,
        "cls_token": "[CLS]",
        "sep_token": "[SEP]",
        "pad_token": "[PAD]",
        "mask_token": "[MASK]",
        "unk_token": "[UNK]",
    }
    (out_dir / "tokenizer_config.json").write_text(json.dumps(config, indent=2))

    import onnx
    import onnx.reference

    onnx.checker.check_model(str(onnx_path))
    graph = onnx.reference.ReferenceEvaluator(str(onnx_path))
    # Another batch size and length than the export's sample: the axes must be dynamic.
    check = tok(["three sentences", "of other lengths than the export's own sample batch", "ok"], padding=True, return_tensors="pt")
    check = (check["input_ids"], check["attention_mask"], check["token_type_ids"])
    with torch.no_grad():
        expected = Encoder(model)(*check).numpy()
    got = graph.run(None, {n: a.numpy() for n, a in zip(NAMES, check)})[0]
    err = float(abs(got - expected).max())
    print(f"{onnx_path}: {onnx_path.stat().st_size / 1e6:.1f} MB, max abs difference from PyTorch {err:.2e}")
    if err > 1e-4:
        sys.exit(f"the ONNX export disagrees with PyTorch (max abs difference {err})")


def quantize(out_dir, tok):
    """onnx/model.onnx → onnx/model_quantized.onnx with 8-bit weights, the settings transformers.js's
    scripts/convert.py and quantize.py give a BERT (mode q8, as in the Xenova/* conversions):
    ONNX Runtime's dynamic quantization of every operator type it can quantize (MatMuls with
    constant weights, the embeddings' Gathers), signed 8-bit weights (unsigned only for models
    with Conv, which ONNX Runtime Web has no signed kernel for), per channel, reduced to 7 bits
    (per_channel and reduce_range are on for every model type outside its decoder/speech list),
    activations quantized to unsigned 8 bits at run time."""
    import onnxruntime
    from onnxruntime.quantization import QuantType, quantize_dynamic

    fp32 = out_dir / "onnx" / "model.onnx"
    q8 = out_dir / "onnx" / "model_quantized.onnx"
    # (Without its advice to run ONNX Runtime's pre-processing first: transformers.js does not.)
    logging.disable(logging.WARNING)
    quantize_dynamic(
        fp32,
        q8,
        per_channel=True,
        reduce_range=True,
        weight_type=QuantType.QInt8,
        extra_options={"EnableSubgraph": True, "MatMulConstBOnly": True},
    )
    logging.disable(logging.NOTSET)

    # How far 8 bits move the mean-pooled sentence vectors (the benchmark compares those), in
    # ONNX Runtime on this machine: a report, not a check, but a broken file fails here.
    batch = tok(["three sentences", "of other lengths than the export's own sample batch", "ok"], padding=True, return_tensors="np")
    feed = {n: batch[n].astype(np.int64) for n in NAMES}
    mask = feed["attention_mask"][..., None].astype(np.float64)

    def pooled(path):
        session = onnxruntime.InferenceSession(str(path), providers=["CPUExecutionProvider"])
        h = session.run(None, feed)[0].astype(np.float64)
        v = (h * mask).sum(1) / mask.sum(1)
        return v / np.linalg.norm(v, axis=1, keepdims=True)

    cos = float((pooled(fp32) * pooled(q8)).sum(1).min())
    print(f"{q8}: {q8.stat().st_size / 1e6:.1f} MB, min cosine of mean-pooled vectors against fp32 {cos:.4f} (ONNX Runtime {onnxruntime.__version__})")


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    model_dir, out_dir = Path(args[0]), Path(args[1])
    tok = AutoTokenizer.from_pretrained(model_dir)
    if "--quantize-only" not in sys.argv:
        export(model_dir, out_dir, tok)
    quantize(out_dir, tok)


if __name__ == "__main__":
    main()
