"""A sequence (or token) classifier exported by bertbench, for `transformers`.

Load the folder with

    AutoModelForSequenceClassification.from_pretrained(folder, trust_remote_code=True)

(a token classifier: `AutoModelForTokenClassification`; a question-answering model:
`AutoModelForQuestionAnswering`).

It computes what the page computed: the sentence features that `config.bertbench_head["spec"]`
names (mean over the tokens the attention mask keeps, or the first token, or the pooler; from
the last layer, the second-to-last, or the last four summed or concatenated oldest first), then
`classifier`, a linear layer. Written by bertbench for a {MODEL} encoder.
"""
import torch
from torch import nn
from transformers import {CONFIG}, {MODEL}, PreTrainedModel
from transformers.modeling_outputs import QuestionAnsweringModelOutput, SequenceClassifierOutput, TokenClassifierOutput


class BertbenchConfig({CONFIG}):
    """The {CONFIG} of the encoder, under a `model_type` of its own: without this file
    (`trust_remote_code=True`), transformers refuses the folder instead of loading it as a plain
    {MODEL} classifier, which would compute other numbers."""

    model_type = "bertbench"


class BertbenchForSequenceClassification(PreTrainedModel):
    config_class = BertbenchConfig
    base_model_prefix = "{PREFIX}"
    per_token = False

    def __init__(self, config):
        super().__init__(config)
        spec = config.bertbench_head["spec"]
        self.pooling, self.layers = spec["pooling"], spec["layers"]
        with_pooler = {"add_pooling_layer": config.bertbench_head["with_pooler"]} if {HAS_POOLER} else {}
        self.{PREFIX} = {MODEL}(config, **with_pooler)
        span = min(4, config.num_hidden_layers)
        width = config.hidden_size * (span if self.layers == "ConcatLastFour" else 1)
        self.classifier = nn.Linear(width, config.num_labels)
        self.post_init()

    def features(self, outputs, attention_mask):
        if self.pooling == "Pooler" and not self.per_token:
            return outputs.pooler_output
        # The embeddings, then each layer; the last as `last_hidden_state`, which transformers 4
        # leaves out of `hidden_states` where a final LayerNorm follows the layers (ModernBERT's).
        states = outputs.hidden_states[:-1] + (outputs.last_hidden_state,)
        layers = len(states) - 1
        span = min(4, layers)

        def pool(h):
            if self.per_token:
                return h
            if self.pooling == "Mean":
                m = attention_mask.unsqueeze(-1).to(h.dtype)
                return (h * m).sum(1) / m.sum(1).clamp(min=1)
            return h[:, 0]

        if self.layers == "Last":
            return pool(states[-1])
        if self.layers == "SecondToLast":
            return pool(states[-2])
        if self.layers == "SumLastFour":
            return pool(sum(states[layers + 1 - span:]))
        if self.layers == "ConcatLastFour":
            return torch.cat([pool(h) for h in states[layers + 1 - span:]], dim=-1)
        raise ValueError(f"unknown layers {self.layers!r}")

    def forward(self, input_ids=None, attention_mask=None, token_type_ids=None, labels=None, **kwargs):
        if attention_mask is None:
            attention_mask = torch.ones_like(input_ids)
        extra = {"token_type_ids": token_type_ids} if {HAS_SEGMENTS} and token_type_ids is not None else {}
        outputs = self.{PREFIX}(input_ids=input_ids, attention_mask=attention_mask, output_hidden_states=True, **extra)
        logits = self.classifier(self.features(outputs, attention_mask))
        loss = None
        if labels is not None and self.config.num_labels == 1:
            loss = nn.functional.mse_loss(logits.view(-1), labels.view(-1).to(logits.dtype))
        elif labels is not None:
            loss = nn.functional.cross_entropy(logits.view(-1, self.config.num_labels), labels.view(-1))
        return SequenceClassifierOutput(loss=loss, logits=logits, hidden_states=outputs.hidden_states)


class BertbenchForTokenClassification(BertbenchForSequenceClassification):
    """The same features read at every token (no pooling), then `classifier`: one label per
    token. Load it with `AutoModelForTokenClassification.from_pretrained(folder,
    trust_remote_code=True)`."""

    per_token = True

    def forward(self, input_ids=None, attention_mask=None, token_type_ids=None, labels=None, **kwargs):
        out = super().forward(input_ids, attention_mask, token_type_ids)
        loss = None
        if labels is not None:
            loss = nn.functional.cross_entropy(out.logits.view(-1, self.config.num_labels), labels.view(-1), ignore_index=-100)
        return TokenClassifierOutput(loss=loss, logits=out.logits, hidden_states=out.hidden_states)


class BertbenchForQuestionAnswering(BertbenchForTokenClassification):
    """Every token's features, then `classifier` with two outputs: the start and the end logit
    of an answer span. Load it with `AutoModelForQuestionAnswering.from_pretrained(folder,
    trust_remote_code=True)`."""

    def forward(self, input_ids=None, attention_mask=None, token_type_ids=None, start_positions=None, end_positions=None, **kwargs):
        out = BertbenchForSequenceClassification.forward(self, input_ids, attention_mask, token_type_ids)
        start_logits, end_logits = out.logits.split(1, dim=-1)
        start_logits, end_logits = start_logits.squeeze(-1).contiguous(), end_logits.squeeze(-1).contiguous()
        loss = None
        if start_positions is not None and end_positions is not None:
            loss = (nn.functional.cross_entropy(start_logits, start_positions) + nn.functional.cross_entropy(end_logits, end_positions)) / 2
        return QuestionAnsweringModelOutput(loss=loss, start_logits=start_logits, end_logits=end_logits, hidden_states=out.hidden_states)
