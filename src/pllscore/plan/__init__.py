"""Pure planning logic: token/word alignment, masked copies, batching. Never imports torch."""
