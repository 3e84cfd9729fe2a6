"""N-best rescoring with a language model (the use case of Salazar et al. 2020).

In: a table of hypotheses, one row each: an utterance id, the hypothesis text, its first-pass
score (from an ASR or MT system), and optionally the utterance's reference and a dev/test split.
Out: every hypothesis with its LM score ``lm_logprob`` (a masked LM's PLL under one metric, or a causal
LM's log-likelihood, in nats), ``n_tokens`` (the tokens the LM scored), the combined score
``combined = first_pass + lam * lm_logprob + beta * n_tokens`` and ``chosen`` (the best hypothesis of its
utterance; ties go to the first in input order); with references, the word error rate (or BLEU)
of the first-pass choice and of the rescored choice.

Two steps, kept apart:

1. :func:`score_hypotheses`: the distinct hypothesis texts are scored with
   :func:`pllscore.score_file` into an intermediate file next to the output (``OUT.lm.parquet``),
   so an interrupted run keeps its finished chunks and ``resume=True`` continues it.
2. :func:`combine`, :func:`choose`, :func:`evaluate` and :func:`tune`: pure pandas/numpy on the
   scored table, no model needed.

:func:`rescore` runs both; ``pllscore rescore`` is that function on the command line.

The modules, one step each:

- :mod:`~pllscore.rescoring.nbest`: read and check the n-best table.
- :mod:`~pllscore.rescoring.choice`: the combined score and the choice per utterance.
- :mod:`~pllscore.rescoring.evaluation`: corpus WER/BLEU and the oracle WER.
- :mod:`~pllscore.rescoring.tuning`: the grids and the grid search for ``lam`` and ``beta``.
- :mod:`~pllscore.rescoring.lmscores`: LM scores of the hypotheses through ``score_file``.
- :mod:`~pllscore.rescoring.summary`: the run's summary, result and output file.
- :mod:`~pllscore.rescoring.run`: :func:`rescore_frame` and :func:`rescore`.

Nothing here imports torch, jiwer or sacrebleu at import time. The public names are imported
from :mod:`pllscore.rescore`.
"""
