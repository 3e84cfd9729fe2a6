"""Split a language model into its encoder and its LM head, per model family.

Applying the head only where a score is read (not at every position of every copy) is
the largest saving of the masked engine. Families not listed fall back to the full model.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

Head = Callable[[torch.Tensor], torch.Tensor]

__all__ = ["Head", "split_causal_lm", "split_masked_lm"]


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
        return get(model)
    except AttributeError:
        return None


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
    return base, head
