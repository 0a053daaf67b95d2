#!/usr/bin/env python3
"""Exports a BERT checkpoint folder to ONNX for transformers.js, from the same safetensors the
page loads, so the benchmark runs identical weights on both sides.

    python3 scripts/export_onnx.py MODEL_DIR OUT_DIR

Writes OUT_DIR/config.json, tokenizer.json, tokenizer_config.json and onnx/model.onnx (fp32,
inputs input_ids / attention_mask / token_type_ids with dynamic batch and length, output
last_hidden_state), the layout transformers.js reads. Checks the ONNX graph against PyTorch on
a padded batch before returning. Needs torch, transformers, onnx and onnxscript.
"""
import json
import shutil
import sys
from pathlib import Path

import torch
from transformers import AutoModel, AutoTokenizer


class Encoder(torch.nn.Module):
    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, input_ids, attention_mask, token_type_ids):
        return self.model(input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids).last_hidden_state


def main():
    model_dir, out_dir = Path(sys.argv[1]), Path(sys.argv[2])
    (out_dir / "onnx").mkdir(parents=True, exist_ok=True)
    tok = AutoTokenizer.from_pretrained(model_dir)
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
    got = graph.run(None, {n: a.numpy() for n, a in zip(["input_ids", "attention_mask", "token_type_ids"], check)})[0]
    err = float(abs(got - expected).max())
    print(f"{onnx_path}: {onnx_path.stat().st_size / 1e6:.1f} MB, max abs difference from PyTorch {err:.2e}")
    if err > 1e-4:
        sys.exit(f"the ONNX export disagrees with PyTorch (max abs difference {err})")


if __name__ == "__main__":
    main()
