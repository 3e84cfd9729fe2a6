"""The Ray engine's work on an actor: whole input blocks scored by the local engine's table job.

The driver (:mod:`pllscore.jobs.ray`) adds four columns to each block it puts in the object store: the
block's number, each row's id over all inputs, and the file and line each row comes from (so that an error
names them as the local engine does). :func:`score_block`, called on an actor of a
:class:`~pllscore.jobs.ray_calls.ModelPool` that holds the loaded model, strips them, scores the block and
writes its shard ``part-<block>.parquet`` atomically: the block's commit point.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pllscore.errors import PllscoreError

__all__ = ["BLOCK", "FILE", "LINE", "ROW", "BlockJob", "pllscore_cause", "score_block", "shard_path"]

# the columns the driver adds to each block: its number, and each row's id over all inputs
BLOCK, ROW = "_pllscore_block", "_pllscore_row"
# and where each row comes from, so that an error names the file and line as the local engine does
FILE, LINE = "_pllscore_file", "_pllscore_line"


def shard_path(out: Path, block: int) -> Path:
    """The shard of ``block`` in the output folder ``out``."""
    from pllscore.io.writers import part_name

    return out / part_name(block, "parquet")


@dataclass(frozen=True)
class BlockJob:
    """What every block of one :func:`~pllscore.jobs.ray.score_dataset` run shares; put in Ray's object store once.

    ``run``: the run's own id (an actor prepares the options once per run); ``settings``: the driver's record of
    the run's settings, stored in each shard; ``out``: the output folder.
    """

    run: str
    options: Any
    settings: dict[str, Any]
    out: str


#: run id -> prepared options, for the run this actor process last scored for: the options (metrics, unigram
#: model, a corpus counted) are prepared once per run and actor, not once per block
_PREPARED: dict[str, Any] = {}


def score_block(scorer: Any, item: tuple[Any, Any]) -> dict[str, Any]:
    """Score one block (``item``: the object-store refs of the run's :class:`BlockJob` and of the block's frame)
    with ``scorer``, write its shard; a summary row. A pllscore error is returned in the row, not raised."""
    import ray

    from pllscore.io.provenance import run_record
    from pllscore.io.readers import InputTable
    from pllscore.io.writers import write_part

    job, frame = ray.get(list(item))
    block, out = int(frame[BLOCK].iloc[0]), Path(job.out)
    prepared = _PREPARED.get(job.run)
    if prepared is None:  # an actor holds one scorer, so the run's id is the key
        _PREPARED.clear()
        prepared = _PREPARED[job.run] = job.options.prepare(scorer)
    attempts = out / "_attempts"
    attempts.mkdir(exist_ok=True)
    attempt = len(list(attempts.glob(f"{block}.*"))) + 1
    (attempts / f"{block}.{attempt}").touch()
    t0 = time.perf_counter()
    rows = frame[ROW].tolist()
    lines = [None if line < 0 else int(line) for line in frame[LINE].tolist()]
    data = frame.drop(columns=[BLOCK, ROW, LINE, FILE]).reset_index(drop=True)
    table = InputTable(
        source=frame[FILE].iloc[0], frame=data, column=job.settings["column"], rows=rows, lines=lines, skipped=[]
    )
    try:  # the local engine's checks and scoring; an error names the file and line
        scored = prepared.table(table).rows(0, len(rows))
    except PllscoreError as e:  # returned, not raised: the other blocks go on, and the driver names the first
        return {"block": block, "rows": len(rows), "seconds": time.perf_counter() - t0, "attempt": attempt,
                "provenance": None, "error": str(e)}  # fmt: skip
    record = run_record(scorer, prepared.metrics)
    meta = {**job.settings, **record, "block": block}  # the driver's record of the settings, as in _meta.json
    # one atomic file per block (temporary name, fsync, rename): the block's commit point
    write_part(shard_path(out, block), scored, "parquet", metadata={"pllscore": json.dumps(meta, default=str)})
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
