# Errors and warnings in R's terms: one line of class pllscore_error, texts counted from 1, R's argument syntax,
# no internal file names; Python's warnings as R warnings.

expect_r_error <- function(expr, pattern) {
  e <- tryCatch({
    expr
    NULL
  }, error = function(e) e)
  expect_s3_class(e, "pllscore_error")
  expect_false(inherits(e, "Rcpp::exception"))
  expect_match(conditionMessage(e), pattern)
  expect_false(grepl("\n|Traceback|TypeError|='|--[a-z]", conditionMessage(e)), conditionMessage(e))
  invisible(conditionMessage(e))
}

test_that("an argument the function does not take is one line naming the function, not a TypeError", {
  gpt2 <- tiny_gpt2()
  expect_r_error(pll_score("a b", gpt2, device = "cpu"),
                 "^pll_score\\(\\) has no argument device; device is an argument of pll_model\\(\\)")
  msg <- expect_r_error(pll_score("a b", gpt2, colour = 2), "^pll_score\\(\\) has no argument colour; it takes ")
  expect_match(msg, "texts, model, metric, level, base, surprisal, progress.*context")
  expect_r_error(pll_predict("The ___ barked.", tiny_bert(), colour = 2), "^pll_predict\\(\\) has no argument colour")
  msg <- expect_r_error(pll_model(shared_path("models", "tiny-gpt2"), device = "cpu", colour = 2),
                        "^pll_model\\(\\) has no argument colour; it takes model, device, dtype, reload, revision")
  expect_false(grepl("name_or_path", msg))  # Python's name of R's first argument
})

test_that("errors count texts from 1, as R does, and write Python's keywords as R arguments", {
  gpt2 <- tiny_gpt2()
  expect_r_error(pll_score(c("fine", " "), gpt2), "^text 2 is whitespace only")
  expect_r_error(pll_score(c("fine", "ok"), gpt2, words = list(list("fine"), list())),
                 'text 2 has an empty list of words; give its words, or use words = "whitespace"$')
  long <- paste(rep("word", 300), collapse = " ")
  expect_r_error(pll_score(c("fine", long), tiny_bert()), '^text 2 is .* tokens long.*long = "window"$')
})

test_that("errors name the data frame given, not the file it crossed to Python in, and R's arguments, not flags", {
  gpt2 <- tiny_gpt2()
  msg <- expect_r_error(pll_pairs(data.frame(x = "a"), gpt2, good = "good", bad = "bad"), "the data frame given")
  expect_false(grepl(tempdir(), msg, fixed = TRUE))
  expect_r_error(pll_blimp(file.path(tempdir(), "no-blimp"), gpt2), "give data = the folder of")
  expect_r_error(pll_blimp(shared_path("data", "blimp"), gpt2, paradigms = "anaphor_gender_agreement", colour = 2),
                 "^pll_blimp\\(\\) got an unknown option 'colour'")
})

test_that("a Python error that is not pllscore's is still one line of class pllscore_error", {
  need_pllscore()
  e <- tryCatch(pllscore:::pll_call(reticulate::py_eval("int", convert = FALSE), "seven"), error = function(e) e)
  expect_s3_class(e, "pllscore_error")
  expect_equal(e$type, "ValueError")
  expect_match(conditionMessage(e), "^ValueError: invalid literal for int\\(\\)")
})

test_that("pllscore's warnings are R warnings of class pllscore_warning", {
  ns <- utils::read.delim(shared_path("data", "naturalstories", "processed_wordinfo.tsv"), quote = "",
                          na.strings = character(0), stringsAsFactors = FALSE)
  ns <- ns[ns$zone <= 30 & ns$item <= 3, ]
  expect_warning(
    pll_reading_times(ns, tiny_gpt2(), text = "item", position = "zone", word = "word", measures = "meanItemRT",
                      progress = FALSE),
    "3 texts and .* fitted rows are few", class = "pllscore_warning"
  )
})
