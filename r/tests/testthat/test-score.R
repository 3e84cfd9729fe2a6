texts <- c("The cat sat on the mat.", "Colourless green ideas sleep furiously.", "A dog.")

test_that("pll_score equals the Python API at every level, for a masked and a causal LM", {
  need_pllscore()
  to_frame <- pllscore_py()$to_frame
  for (model in list(tiny_bert(), tiny_gpt2())) {
    metrics <- if (model$kind == "masked") list("original", "word-l2r") else NULL
    py_results <- model$scorer$score(as.list(texts), metric = metrics)
    for (level in c("text", "word", "token")) {
      for (view in list(list(base = exp(1), surprisal = FALSE), list(base = 2, surprisal = TRUE))) {
        r <- if (is.null(metrics)) {
          pll_score(texts, model, level = level, base = view$base, surprisal = view$surprisal)
        } else {
          pll_score(texts, model, metric = c("original", "word-l2r"), level = level, base = view$base,
                    surprisal = view$surprisal)
        }
        py <- to_frame(py_results, if (level == "text") "sentence" else level,
                       base = if (view$base == 2) 2 else "e", surprisal = view$surprisal)
        expect_equal(names(r), unlist(py_list(py_ref()$names(py))))
        value <- if (view$surprisal) "surprisal_bits" else "logprob"
        expect_equal(r[[value]], py_column(py, value), tolerance = 1e-9)
        expect_identical(r$text_id, as.integer(py_column(py, "text_id")) + 1L)
        expect_identical(r$metric, py_column(py, "metric"))
        if (level == "text") expect_identical(r$text, texts[r$text_id])
        if (level != "text") expect_identical(r$start, as.integer(py_column(py, "start")))
      }
    }
  }
})

test_that("pll_score passes the options of Scorer.score", {
  need_pllscore()
  gpt2 <- tiny_gpt2()
  r <- pll_score(texts, gpt2, level = "word", words = "whitespace", word_prob = "bow", context = "Look:")
  py <- gpt2$scorer$score(as.list(texts), words = "whitespace", word_prob = "bow", context = "Look:")
  expect_equal(r$logprob, unlist(py_list(py_ref()$words(py))), tolerance = 1e-9)
  expect_equal(nrow(r), length(unlist(strsplit(texts, " "))))
})

test_that("a causal LM's score takes no metric", {
  need_pllscore()
  expect_error(pll_score("A dog.", tiny_gpt2(), metric = "word-l2r"), "leave metric out", class = "pllscore_error")
})

test_that("a pllscore error is one line in R, without a traceback", {
  need_pllscore()
  e <- tryCatch(pll_score(c("A dog.", ""), tiny_gpt2()), error = identity)
  expect_s3_class(e, "pllscore_error")
  expect_equal(e$type, "InputError")
  expect_match(conditionMessage(e), "^text 2 is empty")  # the second text: R counts from 1
  expect_false(grepl("\n|Traceback|File \"", conditionMessage(e)))
  expect_null(conditionCall(e))
  expect_error(pll_score(c("A dog.", NA), tiny_gpt2()), "texts has NA at 2", class = "pllscore_error")
  expect_error(pll_model(shared_path("models", "no-such-model")), class = "pllscore_error")
})

test_that("a model is loaded once and reused", {
  need_pllscore()
  a <- tiny_gpt2()
  b <- pll_model(shared_path("models", "tiny-gpt2"), device = "cpu")
  expect_true(py_list(py_ref()$same(a$scorer, b$scorer)))
  expect_identical(pll_model(a), a)
  expect_output(print(a), "causal LM")
})
