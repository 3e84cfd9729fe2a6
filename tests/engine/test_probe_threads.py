"""The padding probe leaves torch's thread count, which is the whole process's, to the other threads."""

from __future__ import annotations

import threading

import torch

from pllscore.engine import padding


def test_the_probe_sets_no_thread_count_while_another_thread_runs(shared_bert, monkeypatch):
    model, tok = shared_bert.model, shared_bert.tokenizer
    short, long = (tok(text)["input_ids"] for text in padding.PROBE_TEXTS)
    set_to: list[int] = []
    real = torch.set_num_threads
    monkeypatch.setattr(torch, "set_num_threads", lambda n: (set_to.append(n), real(n)))
    before = torch.get_num_threads()
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    other.start()
    try:
        got = padding.probe(model, short, long, tok.pad_token_id)
    finally:
        stop.set()
        other.join()
    assert set_to == [] and torch.get_num_threads() == before
    assert got == ("pad", "")  # BERT is exact under padding (it is on the proven list)
