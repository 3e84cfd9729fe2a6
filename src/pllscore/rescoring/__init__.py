"""N-best rescoring with a language model (the use case of Salazar et al. 2020).

In: a table of hypotheses, one row each: an utterance id, the hypothesis text, its first-pass
score (from an ASR or MT system), and optionally the utterance's reference and a dev/test split.
Out: every hypothesis with its LM score ``lm`` (a masked LM's PLL under one metric, or a causal
LM's log-likelihood, in nats), ``n_tokens`` (the tokens the LM scored), the combined score
``combined = first_pass + lam * lm + beta * n_tokens`` and ``chosen`` (the best hypothesis of its
utterance; ties go to the first in input order); with references, the word error rate (or BLEU)
of the first-pass choice and of the rescored choice.

Two steps, kept apart:

1. :func:`score_hypotheses`: the distinct hypothesis texts are scored with
   :func:`pllscore.score_file` into an intermediate file next to the output (``OUT.lm.parquet``),
   so an interrupted run keeps its finished chunks and ``resume=True`` continues it.
2. :func:`combine`, :func:`choose`, :func:`evaluate` and :func:`tune`: pure pandas/numpy on the
   scored table, no model needed.

:func:`rescore` runs both; ``pllscore rescore`` is that function on the command line.

Modules: :mod:`~pllscore.rescoring.nbest` (read and check the table), :mod:`~pllscore.rescoring.scores`
(LM scores), :mod:`~pllscore.rescoring.choose` (combine and choose), :mod:`~pllscore.rescoring.evaluate`
(WER/BLEU, oracle, tuning) and :mod:`~pllscore.rescoring.run` (the whole run); the public names
are imported from :mod:`pllscore.rescore`.
"""
