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
  # Python's rows come sorted (texts, then positions); input_rows says where each was in the input
  back <- order(unlist(py_list(py$input_rows)))
  expect_equal(got$words$tiny_gpt2_surprisal_bits, py_column(py$words, "tiny_gpt2_surprisal_bits")[back],
               tolerance = 1e-9)
  expect_identical(got$words$meanItemRT_included, py_column(py$words, "meanItemRT_included")[back])
  expect_identical(got$words$word, py_column(py$words, "word")[back])
  expect_identical(got$words$word, ns$word)
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

test_that("pll_reading_times keeps the input's rows in the input's order, with its columns and their types", {
  need_pllscore()
  ns <- read_ns()
  ns <- ns[rev(seq_len(nrow(ns))), ]  # stories and words reversed
  ns <- ns[c(seq(1, nrow(ns), 2), seq(2, nrow(ns), 2)), ]  # and interleaved: no order pllscore would sort into
  ns$flag <- ns$zone %% 2 == 0
  gpt2 <- tiny_gpt2()
  got <- pll_reading_times(ns, gpt2, text = "item", position = "zone", word = "word", measures = "meanItemRT")
  expect_identical(got$words[names(ns)], ns)  # every input column, its type and row names, in the input's order
  expect_identical(got$words$text_key, ns$item)  # integer stays integer
  expect_true(is.logical(got$words$meanItemRT_included))
  expect_equal(setdiff(names(got$words), names(ns)),
               c("length", "zipf", "tiny_gpt2_surprisal_bits", "meanItemRT_included", "text_key"))
  # each row's surprisal is its own word's: pll_words over each story in reading order, matched by story and zone
  story <- ns[order(ns$item, ns$zone), ]
  bits <- pll_words(story$word, story$item, gpt2, base = 2, surprisal = TRUE, bow = FALSE)
  at <- match(paste(ns$item, ns$zone), paste(story$item, story$zone))
  expect_equal(got$words$tiny_gpt2_surprisal_bits, bits[at], tolerance = 1e-9)
  expect_equal(got$words$length, nchar(gsub("^[[:punct:]]+|[[:punct:]]+$", "", ns$word)))
  # a file: its rows in the file's order
  file <- tempfile(fileext = ".csv")
  utils::write.csv(ns, file, row.names = FALSE)
  from_file <- pll_reading_times(file, gpt2, text = "item", position = "zone", word = "word", measures = "meanItemRT")
  expect_identical(from_file$words$word, ns$word)
  expect_equal(from_file$words$tiny_gpt2_surprisal_bits, bits[at], tolerance = 1e-9)
})

test_that("words.csv of output= holds logicals that read.csv reads as logical", {
  need_pllscore()
  out <- file.path(tempfile(), "rt")
  got <- pll_reading_times(read_ns(), tiny_gpt2(), text = "item", position = "zone", word = "word",
                           measures = "meanItemRT", output = out)
  back <- utils::read.csv(file.path(out, "words.csv"))
  expect_true(is.logical(back$meanItemRT_included))
  at <- match(paste(got$words$item, got$words$zone), paste(back$text_key, back$position))  # the file's rows: sorted
  expect_identical(back$meanItemRT_included[at], got$words$meanItemRT_included)
  expect_identical(sum(back$meanItemRT_included), nrow(back[back$meanItemRT_included, ]))
})

test_that("pll_reading_times masks a masked LM's displayed words whole, as pll_words does by default", {
  need_pllscore()
  ns <- read_ns()
  ns <- ns[ns$item <= 2 & ns$zone <= 25, ]
  ns <- ns[order(ns$item, ns$zone), ]  # each story's words in reading order, as pll_words joins them
  bert <- tiny_bert()
  got <- pll_reading_times(ns, bert, text = "item", position = "zone", word = "word", measures = "meanItemRT",
                           spillover = 0)
  whole <- pll_words(ns$word, ns$item, bert, base = 2, surprisal = TRUE)
  by_tokenizer <- pll_words(ns$word, ns$item, bert, base = 2, surprisal = TRUE, mask_by = "tokenizer")
  expect_equal(got$words$tiny_bert_cased_surprisal_bits, whole, tolerance = 1e-9)
  expect_true(any(abs(whole - by_tokenizer) > 0.5))  # words of several tokenizer words ("hills,", "Bradford's")
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
  got <- pll_blimp(data, models, paradigms = "anaphor_number_agreement", limit = 20, metrics = c("original", "word-l2r"))
  run_blimp <- reticulate::import("pllscore.eval.runs", convert = FALSE)$run_blimp
  py <- run_blimp(lapply(models, function(m) m$scorer), data = data, paradigms = list("anaphor_number_agreement"),
                  limit = 20L, metrics = list("original", "word-l2r"), progress = FALSE)
  expect_equal(nrow(got$pairs), 60)
  expect_equal(got$pairs$good_logprob, py_column(py$pairs, "good_logprob"), tolerance = 1e-9)
  expect_equal(got$pairs$bad_logprob, py_column(py$pairs, "bad_logprob"), tolerance = 1e-9)
  expect_equal(100 * got$summary$overall, py_column(py$summary, "Overall"), tolerance = 0.05 + 1e-9)  # Python: %, 1 decimal
  expect_identical(got$summary$metric, py_column(py$summary, "metric"))
})

test_that("pll_blimp's tables: proportions everywhere, present phenomena only, overall, 1-based pair_id, R's labels", {
  need_pllscore()
  data <- shared_path("data", "blimp")
  paradigms <- c("anaphor_number_agreement", "determiner_noun_agreement_1")
  got <- pll_blimp(data, list(tiny_bert(), tiny_gpt2()), paradigms = paradigms, limit = 6, metrics = "original",
                   norm = "per-char")
  first <- readLines(file.path(data, paste0(paradigms[1], ".jsonl")), n = 1)
  expect_identical(got$pairs$pair_id[1], as.integer(sub('.*"pairID": "([0-9]+)".*', "\\1", first)) + 1L)
  expect_identical(got$pairs$pair_id[1:6], 1:6)
  expect_identical(unique(got$pairs$model), c("tiny_bert_cased", "tiny_gpt2"))
  expect_identical(unique(got$summary$model), c("tiny_bert_cased", "tiny_gpt2"))
  expect_equal(names(got$summary), c("model", "model_id", "metric", "overall", "overall_per_char", "anaphor_agreement",
                                     "determiner_noun_agreement"))
  for (m in c("tiny_bert_cased", "tiny_gpt2")) {
    pairs <- got$pairs[got$pairs$model == m, ]
    by_paradigm <- c(tapply(pairs$correct, pairs$paradigm, mean))  # 6 pairs each: a proportion, by hand
    row <- got$summary[got$summary$model == m, ]
    expect_equal(row$overall, mean(by_paradigm))
    expect_equal(row$anaphor_agreement, unname(by_paradigm["anaphor_number_agreement"]))
    expect_equal(row$overall_per_char, mean(c(tapply(pairs$correct_per_char, pairs$paradigm, mean))))
    expect_equal(sort(got$accuracy$accuracy[got$accuracy$model == m]), sort(unname(by_paradigm)))
  }
  expect_true(all(got$accuracy$accuracy >= 0 & got$accuracy$accuracy <= 1))
  # the models first, as earlier versions took them: the same tables
  old <- pll_blimp(tiny_gpt2(), data, paradigms = paradigms[1], limit = 6)
  new <- pll_blimp(data, tiny_gpt2(), paradigms = paradigms[1], limit = 6)
  expect_identical(old$summary, new$summary)
  expect_identical(new$summary$model, "tiny_gpt2")
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
  expect_true("overall_per_char" %in% names(got$summary))
  expect_equal(got$accuracy$accuracy, py_column(py$accuracy, "accuracy"), tolerance = 1e-9)
  expect_error(pll_pairs(pairs, tiny_bert(), good = "sentence", bad = "bad"), "good column 'sentence'",
               class = "pllscore_error")
})

test_that("pll_pairs keeps the input's columns and types, numbers pairs from 1 and gives proportions", {
  need_pllscore()
  pairs <- data.frame(
    item = c(10L, 20L, 30L, 40L), checked = c(TRUE, FALSE, NA, TRUE),
    good = c("The cats sleep.", "She saw herself.", "NA is a word.", "Dogs bark."),
    bad = c("The cats sleeps.", "She saw himself.", "NA are a word.", "Dogs barks."),
    kind = c("agreement", "anaphor", "agreement", "agreement")
  )
  got <- pll_pairs(pairs, list(tiny_bert(), tiny_gpt2()), good = "good", bad = "bad", group = "kind",
                   metrics = "original")
  expect_identical(got$pairs$pair_id, rep(1:4, 2))
  expect_identical(got$pairs$item, rep(pairs$item, 2))  # integer stays integer: merge(pairs, got$pairs) works
  expect_identical(got$pairs$checked, rep(pairs$checked, 2))
  expect_equal(nrow(merge(pairs, got$pairs[got$pairs$model == "tiny_gpt2", c("item", "correct")])), 4)
  expect_identical(unique(got$pairs$model), c("tiny_bert_cased", "tiny_gpt2"))
  expect_equal(names(got$summary), c("model", "model_id", "metric", "overall", "agreement", "anaphor"))
  for (m in c("tiny_bert_cased", "tiny_gpt2")) {
    mine <- got$pairs[got$pairs$model == m, ]
    row <- got$summary[got$summary$model == m, ]
    expect_equal(row$overall, mean(mine$correct))
    expect_equal(row$agreement, mean(mine$correct[mine$kind == "agreement"]))
    expect_equal(got$accuracy$accuracy[got$accuracy$model == m & got$accuracy$kind == "anaphor"],
                 mean(mine$correct[mine$kind == "anaphor"]))
  }
})
