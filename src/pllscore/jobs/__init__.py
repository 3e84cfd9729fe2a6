"""A table of texts -> output rows: :mod:`.table` (one table under settings, the per-chunk scoring),
:mod:`.local` (``score_file``: read, check, score and write in resumable chunks) and :mod:`.ray`
(``score_dataset``: the same table job on every actor of a Ray cluster)."""
