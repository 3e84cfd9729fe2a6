"""Reading times: how well each model's word surprisal predicts human reading times (``pllscore reading-times``).

:mod:`.table` reads and checks the word table, :mod:`.predictors` adds the length, frequency and lagged
predictors and decides which rows are fitted and in which fold (pure logic, no model), :mod:`.surprisal`
takes each word's surprisal from the scorer, :mod:`.fit` fits the regressions, and :mod:`.run` ties them
together and writes the tables.
"""
