"""What scoring returns: frozen score types (:mod:`.scores`), DataFrames (:mod:`.frames`),
sentence-score normalisations (:mod:`.norms`) and the unigram models they use (:mod:`.unigram`).

Layers, lowest first: norms -> scores -> frames. Importing the package imports frames, which registers
the builder behind :meth:`Results.to_frame`.
"""

from pllscore.results.frames import to_frame, to_wide_frame
from pllscore.results.scores import Results, SentenceScore, TokenScore, WordScore

__all__ = ["Results", "SentenceScore", "TokenScore", "WordScore", "to_frame", "to_wide_frame"]
