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
