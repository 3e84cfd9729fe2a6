"""The Ray engine's actor: one model per actor, whole input blocks scored by the local engine's table job.

The driver (:mod:`pllscore.jobs.ray`) adds four columns to each block it puts in the object store: the
block's number, each row's id over all inputs, and the file and line each row comes from (so that an error
names them as the local engine does). :class:`BlockScorer` strips them, scores the block and writes its
shard ``part-<block>.parquet`` atomically: the block's commit point.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from pllscore.errors import PllscoreError

__all__ = ["BLOCK", "FILE", "LINE", "ROW", "BlockScorer", "pllscore_cause", "shard_path"]

# the columns the driver adds to each block: its number, and each row's id over all inputs
BLOCK, ROW = "_pllscore_block", "_pllscore_row"
# and where each row comes from, so that an error names the file and line as the local engine does
FILE, LINE = "_pllscore_file", "_pllscore_line"


def shard_path(out: Path, block: int) -> Path:
    """The shard of ``block`` in the output folder ``out``."""
    from pllscore.io.writers import part_name

    return out / part_name(block, "parquet")


class BlockScorer:
    """Ray Data actor: loads the model once, then scores whole blocks and writes their shards."""

    def __init__(
        self, model: str, load: dict[str, Any], options: Any, settings: dict[str, Any], out: str, threads: int
    ) -> None:
        import torch

        from pllscore.scoring import api

        if threads > 0:
            torch.set_num_threads(threads)
        self.scorer = api.load(model, **load)  # looked up at call time: tests/distributed/actor_crash.py wraps it
        self.prepared = options.prepare(self.scorer)  # the metrics, the unigram model: once per actor
        self.settings, self.column, self.out = settings, settings["column"], Path(out)

    def __call__(self, batch: Any) -> Any:
        import pandas as pd

        return pd.DataFrame([self._block(int(b), g) for b, g in batch.groupby(BLOCK, sort=True)])

    def _block(self, block: int, frame: Any) -> dict[str, Any]:
        from pllscore.io.provenance import run_record
        from pllscore.io.readers import InputTable
        from pllscore.io.writers import write_part

        attempts = self.out / "_attempts"
        attempts.mkdir(exist_ok=True)
        attempt = len(list(attempts.glob(f"{block}.*"))) + 1
        (attempts / f"{block}.{attempt}").touch()
        t0 = time.perf_counter()
        rows = frame[ROW].tolist()
        lines = [None if line < 0 else int(line) for line in frame[LINE].tolist()]
        data = frame.drop(columns=[BLOCK, ROW, LINE, FILE]).reset_index(drop=True)
        table = InputTable(
            source=frame[FILE].iloc[0], frame=data, column=self.column, rows=rows, lines=lines, skipped=[]
        )
        try:  # the local engine's checks and scoring; an error names the file and line
            out = self.prepared.table(table).rows(0, len(rows))
        except PllscoreError as e:  # returned, not raised: Ray's wrappers lose the error's type on the way back
            return {"block": block, "rows": len(rows), "seconds": time.perf_counter() - t0, "attempt": attempt,
                    "provenance": None, "error": str(e)}  # fmt: skip
        record = run_record(self.scorer, self.prepared.metrics)
        meta = {**self.settings, **record, "block": block}  # the driver's record of the settings, as in _meta.json
        # one atomic file per block (temporary name, fsync, rename): the block's commit point
        write_part(shard_path(self.out, block), out, "parquet", metadata={"pllscore": json.dumps(meta, default=str)})
        return {"block": block, "rows": len(rows), "seconds": time.perf_counter() - t0, "attempt": attempt,
                "provenance": json.dumps(record, default=str), "error": None}  # fmt: skip


def pllscore_cause(error: BaseException) -> PllscoreError | None:
    """pllscore's own error inside Ray's wrappers (a task error around a UDF error around ours), if any."""
    seen: set[int] = set()
    todo: list[BaseException | None] = [error]
    while todo:
        e = todo.pop()
        if e is None or id(e) in seen:
            continue
        if isinstance(e, PllscoreError):
            return e
        seen.add(id(e))
        todo += [getattr(e, "cause", None), e.__cause__, e.__context__]
    return None
