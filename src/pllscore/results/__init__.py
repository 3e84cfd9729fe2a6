"""What scoring returns: frozen score types (:mod:`.scores`), DataFrames (:mod:`.frames`),
sentence-score normalisations (:mod:`.norms`) and the unigram models they use (:mod:`.unigram`)."""

from pllscore.results.scores import Results, SentenceScore, TokenScore, WordScore

__all__ = ["Results", "SentenceScore", "TokenScore", "WordScore"]
