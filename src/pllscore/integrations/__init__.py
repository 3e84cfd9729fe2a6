"""Adapters that let other tools use pllscore's scorers (lm-evaluation-harness: :mod:`.lm_eval`)."""
