"""Split a language model into its encoder and its LM head, per model family.

Applying the head only where a score is read (not at every position of every copy) is
the largest saving of the masked engine. Families not listed fall back to the full model.
A model spread over devices by accelerate has its head called as a module (:func:`called`): the
readout's sliced path reads a plain head's weights directly, which may be offloaded there.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from pllscore.engine.placement import is_spread

Head = Callable[[torch.Tensor], torch.Tensor]

__all__ = ["Head", "called", "split_causal_lm", "split_masked_lm"]


def called(model: Any, head: Head) -> Head:
    """``head`` as it may run on ``model``: a spread model's head only through its forward pass (accelerate's
    hook puts its input on its device and loads its weights), so not as a plain ``Linear`` to be sliced."""
    if is_spread(model) and isinstance(head, torch.nn.Linear):
        module = head
        return lambda h: module(h)
    return head


def _distilbert_head(m: Any) -> Head:
    return lambda h: m.vocab_projector(m.vocab_layer_norm(m.activation(m.vocab_transform(h))))


# class name -> (encoder, head); each head equals what the class's forward() applies
_MASKED: dict[str, Callable[[Any], tuple[Any, Head]]] = {
    "BertForMaskedLM": lambda m: (m.bert, m.cls),
    "RobertaForMaskedLM": lambda m: (m.roberta, m.lm_head),
    "XLMRobertaForMaskedLM": lambda m: (m.roberta, m.lm_head),
    "CamembertForMaskedLM": lambda m: (m.roberta, m.lm_head),
    "DistilBertForMaskedLM": lambda m: (m.distilbert, _distilbert_head(m)),
    "AlbertForMaskedLM": lambda m: (m.albert, m.predictions),
    "ElectraForMaskedLM": lambda m: (m.electra, lambda h: m.generator_lm_head(m.generator_predictions(h))),
    "ModernBertForMaskedLM": lambda m: (m.model, lambda h: m.decoder(m.head(h))),
}

# causal families whose logits are exactly lm_head(base_model(...)[0]): no soft-capping or scaling
_CAUSAL_TYPES = {
    "gpt2",
    "gpt_neo",
    "gpt_neox",
    "gptj",
    "llama",
    "mistral",
    "qwen2",
    "qwen3",
    "opt",
    "olmo",
    "olmo2",
    "phi3",
    "gemma3_text",  # only without final_logit_softcapping (checked below)
}


def split_masked_lm(model: Any) -> tuple[Any, Head] | None:
    """(encoder, head) for a known masked-LM class, else None (use the full model)."""
    get = _MASKED.get(type(model).__name__)
    if get is None:
        return None
    try:
        encoder, head = get(model)
    except AttributeError:
        return None
    return encoder, called(model, head)


def split_causal_lm(model: Any) -> tuple[Any, Head] | None:
    """(decoder, head) for a known causal-LM family, else None (use the full model)."""
    if getattr(model.config, "model_type", None) not in _CAUSAL_TYPES:
        return None
    # soft-capped logits are not lm_head's output (Gemma 2; Gemma 3 has none unless configured)
    if getattr(model.config, "final_logit_softcapping", None) is not None:
        return None
    base = getattr(model, getattr(model, "base_model_prefix", ""), None)
    head = model.get_output_embeddings()
    if base is None or head is None:
        return None
    return base, called(model, head)
