#!/usr/bin/env python3
"""Random-weight folders of the standard sizes with their MLM heads, for measuring what the page
does with a model of that size (bench/open_big_model.mjs): BERT-base and BERT-large
(BertForMaskedLM, the default model's 30,522-piece uncased vocabulary), DeBERTa-v3-base
(DebertaV2ForMaskedLM), ModernBERT-base (ModernBertForMaskedLM), ALBERT-base-v2, MPNet-base,
ELECTRA-small, XLM-RoBERTa-base and CamemBERT-base, each with its released model's configuration
values. All but BERT and ELECTRA take the tokenizer of the small test model of their
family (`scripts/make_test_models.py`): a vocabulary smaller than the embedding table, which
the weights do not care about.

    python3 scripts/make_big_models.py OUT [NAME ...]   # all by default
    # OUT/bert-base (438 MB), OUT/bert-large (1.34 GB), OUT/deberta-v3-base, OUT/modernbert-base,
    # OUT/albert-base-v2, OUT/mpnet-base, OUT/electra-small, OUT/xlm-roberta-base (1.1 GB),
    # OUT/camembert-base
"""
import os
import shutil
import sys

import torch
from transformers import (AlbertConfig, AlbertForMaskedLM, BertConfig, BertForMaskedLM, CamembertConfig, CamembertForMaskedLM,
                          DebertaV2Config, DebertaV2ForMaskedLM, ElectraConfig, ElectraForPreTraining, ModernBertConfig,
                          ModernBertForMaskedLM, MPNetConfig, MPNetForMaskedLM, XLMRobertaConfig, XLMRobertaForMaskedLM)

ROOT = os.path.join(os.path.dirname(__file__), "..")
MINILM = os.path.join(ROOT, "public", "models", "all-MiniLM-L6-v2")

# name: (model class, its configuration, the folder its tokenizer files come from)
SIZES = {
    "bert-base": (BertForMaskedLM, BertConfig(), MINILM),
    "bert-large": (BertForMaskedLM, BertConfig(hidden_size=1024, num_hidden_layers=24, num_attention_heads=16, intermediate_size=4096), MINILM),
    "deberta-v3-base": (DebertaV2ForMaskedLM, DebertaV2Config(
        vocab_size=128100, hidden_size=768, num_hidden_layers=12, num_attention_heads=12, intermediate_size=3072,
        max_position_embeddings=512, type_vocab_size=0, layer_norm_eps=1e-7, relative_attention=True, position_buckets=256,
        norm_rel_ebd="layer_norm", share_att_key=True, pos_att_type=["p2c", "c2p"], max_relative_positions=-1,
        position_biased_input=False), os.path.join(ROOT, "tests", "models", "deberta")),
    "modernbert-base": (ModernBertForMaskedLM, ModernBertConfig(
        vocab_size=50368, hidden_size=768, intermediate_size=1152, num_hidden_layers=22, num_attention_heads=12,
        global_attn_every_n_layers=3, local_attention=128), os.path.join(ROOT, "tests", "models", "modernbert")),
    "albert-base-v2": (AlbertForMaskedLM, AlbertConfig(
        vocab_size=30000, embedding_size=128, hidden_size=768, num_hidden_layers=12, num_attention_heads=12,
        intermediate_size=3072, hidden_act="gelu_new"), os.path.join(ROOT, "tests", "models", "albert")),
    "mpnet-base": (MPNetForMaskedLM, MPNetConfig(
        vocab_size=30527, hidden_size=768, num_hidden_layers=12, num_attention_heads=12, intermediate_size=3072,
        max_position_embeddings=514, relative_attention_num_buckets=32), os.path.join(ROOT, "tests", "models", "mpnet")),
    "electra-small": (ElectraForPreTraining, ElectraConfig(
        vocab_size=30522, embedding_size=128, hidden_size=256, num_hidden_layers=12, num_attention_heads=4,
        intermediate_size=1024), MINILM),
    "xlm-roberta-base": (XLMRobertaForMaskedLM, XLMRobertaConfig(
        vocab_size=250002, max_position_embeddings=514, type_vocab_size=1, layer_norm_eps=1e-5, bos_token_id=0, pad_token_id=1,
        eos_token_id=2), os.path.join(ROOT, "tests", "models", "xlm-roberta")),
    "camembert-base": (CamembertForMaskedLM, CamembertConfig(
        vocab_size=32005, max_position_embeddings=514, type_vocab_size=1, layer_norm_eps=1e-5, bos_token_id=5, pad_token_id=1,
        eos_token_id=6), os.path.join(ROOT, "tests", "models", "camembert-classifier")),
}


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "/tmp/bertbench-big"
    names = sys.argv[2:] or list(SIZES)  # all of them by default
    for name in names:
        cls, config, tokenizer_from = SIZES[name]
        folder = os.path.join(out, name)
        os.makedirs(folder, exist_ok=True)
        torch.manual_seed(0)
        model = cls(config)
        model.save_pretrained(folder)
        for f in ("tokenizer.json", "vocab.txt", "tokenizer_config.json"):
            if os.path.exists(os.path.join(tokenizer_from, f)):
                shutil.copy(os.path.join(tokenizer_from, f), folder)
        print(name, sum(p.numel() for p in model.parameters()), "parameters,",
              os.path.getsize(os.path.join(folder, "model.safetensors")), "bytes")


if __name__ == "__main__":
    main()
