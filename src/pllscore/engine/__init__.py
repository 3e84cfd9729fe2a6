"""The only package that imports torch: model loading and the masked/causal engines."""
