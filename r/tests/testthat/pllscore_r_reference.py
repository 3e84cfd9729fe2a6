"""The Python API's own numbers for the R tests, read in plain lists (reticulate converts neither pandas nor numpy)."""

import math


def totals(results):
    return [float(r.total) for r in results]


def words(results):
    return [[float(w.score) for w in r.words] for r in results]


def column(frame, name):
    return [None if isinstance(v, float) and math.isnan(v) else v for v in frame[name].tolist()]


def names(frame):
    return [str(c) for c in frame.columns]


def dtypes(frame):
    return [str(t) for t in frame.dtypes]


def same(a, b):
    return a is b


class Predicting:
    """A stand-in with ``Scorer.predict``'s interface (rows ``text_id, text, rank, word, logprob, prob, n_tokens,
    tokens``), for the R side of pll_predict where pllscore has no ``predict``."""

    kind = "causal"
    name = "stand-in"

    def predict(self, texts, k=10, word_tokens=3, candidates=None, level="word"):
        import math

        import pandas as pd

        rows = [
            {"text_id": i, "text": t, "rank": r + 1, "word": f"w{r}", "logprob": -1.5 * (r + 1),
             "prob": math.exp(-1.5 * (r + 1)), "n_tokens": 1 + r % word_tokens, "tokens": [f"t{r}"] * (1 + r % word_tokens)}
            for i, t in enumerate(texts)
            for r in range(k)
        ]  # fmt: skip
        return pd.DataFrame(rows)


def whole_word_chain(path, words):
    """Each word's word-l2r log-probability (nats) with the whole given word masked, by transformers alone (no
    pllscore): token j of a word is read with itself and the word's later tokens masked, all else visible."""
    import torch
    from transformers import AutoModelForMaskedLM, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(path)
    model = AutoModelForMaskedLM.from_pretrained(path).eval()
    enc = tok(" ".join(words), return_offsets_mapping=True)
    ids, offsets = torch.tensor(enc["input_ids"]), enc["offset_mapping"]
    out, start = [], 0
    for w in words:
        pos = [i for i, (s, e) in enumerate(offsets) if e > s and start <= s < start + len(w)]
        total = 0.0
        for j, p in enumerate(pos):
            masked = ids.clone()
            masked[pos[j:]] = tok.mask_token_id
            with torch.no_grad():
                total += torch.log_softmax(model(masked[None]).logits[0, p].double(), -1)[ids[p]].item()
        out.append(total)
        start += len(w) + 1
    return out


def predict_rows(scorer, texts, candidates, base, surprisal):
    """Scorer.predict's table for one list of candidates per text, in a view."""
    return scorer.predict(list(texts), candidates=[list(c) for c in candidates]).to_frame(base=base, surprisal=surprisal)
