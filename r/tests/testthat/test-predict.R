test_that("pll_predict equals Scorer.predict, or says that pllscore has none", {
  need_pllscore()
  gpt2 <- tiny_gpt2()
  if (!reticulate::py_has_attr(gpt2$scorer, "predict")) {
    expect_error(pll_predict("The cat", gpt2), "needs Scorer.predict", class = "pllscore_error")
    return(invisible())
  }
  got <- pll_predict(c("The cat", "A dog"), gpt2, k = 3)
  rows <- pllscore:::py_frame(pllscore:::.pll$bridge$as_frame(gpt2$scorer$predict(list("The cat", "A dog"), k = 3L)))
  expect_equal(got$logprob, rows$logprob, tolerance = 1e-9)
  expect_identical(got$word, rows$word)
  expect_identical(got$text_id, rows$text_id + 1L)
})

test_that("pll_predict passes its arguments and converts the rows of Scorer.predict's interface", {
  need_pllscore()
  stand_in <- structure(list(name = "stand-in", kind = "causal", scorer = py_ref()$Predicting()), class = "pll_model")
  got <- pll_predict(c("The cat", "A dog"), stand_in, k = 2)
  expect_equal(names(got), c("text_id", "text", "rank", "word", "logprob", "prob", "n_tokens", "tokens"))
  expect_identical(got$text_id, c(1L, 1L, 2L, 2L))
  expect_identical(got$text, c("The cat", "The cat", "A dog", "A dog"))
  expect_equal(got$logprob, c(-1.5, -3, -1.5, -3))
  expect_equal(got$prob, exp(got$logprob))
  expect_identical(got$tokens, list("t0", c("t1", "t1"), "t0", c("t1", "t1")))
  expect_error(pll_predict(c("The cat", NA), stand_in), "texts has NA at 2", class = "pllscore_error")
})

test_that("pll_predict takes one list of candidates per text, as Python does, and base and surprisal", {
  need_pllscore()
  gpt2 <- tiny_gpt2()
  frames <- c("The children ran outside to ___", "She unlocked the door with her ___")
  people <- list(c("play", "swim"), "key")  # a text with one response is still a list of its own
  got <- pll_predict(frames, gpt2, candidates = people)
  py <- py_ref()$predict_rows(gpt2$scorer, as.list(frames), lapply(people, as.list), "e", FALSE)
  expect_identical(got$word, py_column(py, "word"))
  expect_equal(got$logprob, py_column(py, "logprob"), tolerance = 1e-9)
  expect_identical(got$text_id, c(1L, 1L, 2L))
  expect_identical(sort(got$word[got$text_id == 1]), c("play", "swim"))
  bits <- pll_predict(frames, gpt2, candidates = people, base = 2, surprisal = TRUE)
  expect_equal(bits$surprisal_bits, -got$logprob / log(2), tolerance = 1e-9)
  expect_equal(bits$prob, got$prob)
  # a table of responses: text_id counted from 1, as pll_predict's rows count them
  table <- data.frame(text_id = c(2, 1, 1), word = c("key", "swim", "play"))
  expect_identical(pll_predict(frames, gpt2, candidates = table), got)
  expect_identical(pll_predict(frames, gpt2, candidates = c("play", "key"))$text_id, c(1L, 1L, 2L, 2L))
  expect_error(pll_predict(frames, gpt2, candidates = list("play")), "1 lists of candidates for 2 texts",
               class = "pllscore_error")
  expect_error(pll_predict(frames, gpt2, candidates = list("play", c("key", NA))), "candidates of text 2 has NA at 2",
               class = "pllscore_error")
  expect_error(pll_predict(frames, gpt2, candidates = data.frame(text_id = 0, word = "a")), "text_id 0",
               class = "pllscore_error")
})
