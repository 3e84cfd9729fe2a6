read_ns <- function() {
  ns <- utils::read.delim(shared_path("data", "naturalstories", "processed_wordinfo.tsv"), quote = "",
                          na.strings = character(0), stringsAsFactors = FALSE)
  ns[ns$zone <= 40 & ns$item <= 4, ]
}

test_that("pll_reading_times equals pllscore.reading_times on the same table", {
  need_pllscore()
  ns <- read_ns()
  gpt2 <- tiny_gpt2()
  got <- pll_reading_times(ns, gpt2, text = "item", position = "zone", word = "word",
                           measures = c("meanItemRT", "gmeanItemRT"))
  py <- pllscore_py()$reading_times(pllscore:::r_frame(ns), list(gpt2$scorer), text_column = "item",
                                    position_column = "zone", word_column = "word",
                                    measures = list("meanItemRT", "gmeanItemRT"), progress = FALSE)
  expect_equal(got$labels, "tiny_gpt2")
  expect_equal(nrow(got$words), nrow(ns))
  expect_true(all(c("tiny_gpt2_surprisal_bits", "meanItemRT_included", "zipf", "length") %in% names(got$words)))
  expect_equal(got$words$tiny_gpt2_surprisal_bits, py_column(py$words, "tiny_gpt2_surprisal_bits"), tolerance = 1e-9)
  expect_identical(got$words$meanItemRT_included, py_column(py$words, "meanItemRT_included"))
  expect_identical(got$words$word, py_column(py$words, "word"))
  expect_equal(names(got$fits), c("model", "measure", "n", "delta_ll", "delta_ll_se", "coef", "coef_se"))
  for (col in c("delta_ll", "delta_ll_se", "coef", "coef_se")) {
    expect_equal(got$fits[[col]], py_column(py$fits, col), tolerance = 1e-9)
  }
  expect_identical(got$fits$n, as.integer(py_column(py$fits, "n")))
  # the surprisal is pll_words' (whitespace words, bits) where no text needs windows
  bits <- pll_words(ns$word[order(ns$item, ns$zone)], ns$item[order(ns$item, ns$zone)], gpt2, base = 2,
                    surprisal = TRUE, bow = FALSE)
  expect_equal(sort(got$words$tiny_gpt2_surprisal_bits), sort(bits), tolerance = 1e-9)
})

test_that("a bad reading-time table is one clear error", {
  need_pllscore()
  expect_error(pll_reading_times(read_ns(), tiny_gpt2(), text = "story", position = "zone", word = "word",
                                 measures = "meanItemRT"),
               "story", class = "pllscore_error")
})

test_that("pll_blimp equals run_blimp", {
  need_pllscore()
  data <- shared_path("data", "blimp")
  models <- list(tiny_bert(), tiny_gpt2())
  got <- pll_blimp(models, data, paradigms = "anaphor_number_agreement", limit = 20, metrics = c("original", "word-l2r"))
  run_blimp <- reticulate::import("pllscore.eval.runs", convert = FALSE)$run_blimp
  py <- run_blimp(lapply(models, function(m) m$scorer), data = data, paradigms = list("anaphor_number_agreement"),
                  limit = 20L, metrics = list("original", "word-l2r"), progress = FALSE)
  expect_equal(nrow(got$pairs), 60)
  expect_equal(got$pairs$good_logprob, py_column(py$pairs, "good_logprob"), tolerance = 1e-9)
  expect_equal(got$pairs$bad_logprob, py_column(py$pairs, "bad_logprob"), tolerance = 1e-9)
  expect_equal(got$summary$Overall, py_column(py$summary, "Overall"), tolerance = 1e-9)
  expect_identical(got$summary$metric, py_column(py$summary, "metric"))
})

test_that("pll_pairs scores a data.frame as run_pairs scores the file", {
  need_pllscore()
  pairs <- data.frame(
    good = c("The cats sleep.", "She saw herself.", "NA is a word."),
    bad = c("The cats sleeps.", "She saw himself.", "NA are a word."),
    kind = c("agreement", "anaphor", "agreement")
  )
  got <- pll_pairs(pairs, tiny_bert(), good = "good", bad = "bad", group = "kind", metrics = "original",
                   norm = "per-char")
  file <- tempfile(fileext = ".csv")
  utils::write.csv(pairs, file, row.names = FALSE)
  run_pairs <- reticulate::import("pllscore.eval.runs", convert = FALSE)$run_pairs
  py <- run_pairs(file, list(tiny_bert()$scorer), good = "good", bad = "bad", group = "kind",
                  metrics = list("original"), norm = list("per-char"), progress = FALSE)
  expect_identical(got$pairs$good, pairs$good)
  expect_equal(got$pairs$good_logprob, py_column(py$pairs, "good_logprob"), tolerance = 1e-9)
  expect_equal(got$pairs$bad_logprob_per_char, py_column(py$pairs, "bad_logprob_per_char"), tolerance = 1e-9)
  expect_true("Overall_per_char" %in% names(got$summary))
  expect_equal(got$accuracy$accuracy, py_column(py$accuracy, "accuracy"), tolerance = 1e-9)
  expect_error(pll_pairs(pairs, tiny_bert(), good = "sentence", bad = "bad"), "good column 'sentence'",
               class = "pllscore_error")
})
