"""What the two question-answering scripts share with `transformers`' `run_qa.py`: where an
answer's characters fall among a window's tokens, and a batch of windows padded to its longest.
"""

import torch


def answer_tokens(offsets, first, last, char, char_end):
    """The answer's first and last token in a window whose passage spans tokens `first..=last`
    (`run_qa.py`'s `prepare_train_features`); (0, 0), the `[CLS]` position, when the window does
    not hold the whole answer."""
    if not (offsets[first][0] <= char and offsets[last][1] >= char_end):
        return 0, 0
    s = first
    while s <= last and offsets[s][0] <= char:
        s += 1
    e = last
    while e >= first and offsets[e][1] >= char_end:
        e -= 1
    return s - 1, e + 1


def pad_batch(wins):
    """Ids, segments and attention mask of `wins`, padded with 0 to the longest."""
    n = max(len(w["input_ids"]) for w in wins)
    pad = lambda key: torch.tensor([w[key] + [0] * (n - len(w[key])) for w in wins])
    mask = torch.tensor([[1] * len(w["input_ids"]) + [0] * (n - len(w["input_ids"])) for w in wins])
    return {"input_ids": pad("input_ids"), "token_type_ids": pad("token_type_ids"), "attention_mask": mask}
