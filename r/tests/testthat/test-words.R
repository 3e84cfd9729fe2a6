# a long data frame: two sentences interleaved, as rows of a study may come
long <- data.frame(
  item = c(1, 1, 2, 1, 2, 2, 1),
  word = c("The", "old", "Gulls", "fisherman", "circled", "above.", "smiled."),
  stringsAsFactors = FALSE
)

python_words <- function(model, groups, sep = " ", ...) {
  results <- model$scorer$score(lapply(groups, function(w) paste(w, collapse = sep)), words = lapply(groups, as.list),
                                word_sep = sep, ...)
  py_list(py_ref()$words(results))
}

test_that("pll_words gives each word its BOW-corrected log-probability under a causal LM, in input order", {
  need_pllscore()
  gpt2 <- tiny_gpt2()
  got <- pll_words(long$word, long$item, gpt2)
  expected <- python_words(gpt2, list(long$word[long$item == 1], long$word[long$item == 2]), word_prob = "bow")
  expect_equal(got[long$item == 1], unlist(expected[[1]]), tolerance = 1e-9)
  expect_equal(got[long$item == 2], unlist(expected[[2]]), tolerance = 1e-9)
  bits <- pll_words(long$word, long$item, gpt2, base = 2, surprisal = TRUE)
  expect_equal(bits, -got / log(2), tolerance = 1e-9)
  plain <- pll_words(long$word, long$item, gpt2, bow = FALSE)
  expected <- python_words(gpt2, list(long$word[long$item == 1], long$word[long$item == 2]))
  expect_equal(plain[long$item == 1], unlist(expected[[1]]), tolerance = 1e-9)
})

test_that("pll_words scores a masked LM's words by word-l2r (or the metric given), with any sep", {
  need_pllscore()
  bert <- tiny_bert()
  got <- pll_words(long$word, long$item, bert)
  expected <- python_words(bert, list(long$word[long$item == 1], long$word[long$item == 2]), metric = "word-l2r",
                           mask_by = "words")
  expect_equal(got[long$item == 1], unlist(expected[[1]]), tolerance = 1e-9)
  expect_equal(got[long$item == 2], unlist(expected[[2]]), tolerance = 1e-9)
  original <- pll_words(long$word, long$item, bert, metric = "original", sep = "  ")
  expected <- python_words(bert, list(long$word[long$item == 1], long$word[long$item == 2]), sep = "  ",
                           metric = "original")
  expect_equal(original[long$item == 2], unlist(expected[[2]]), tolerance = 1e-9)
})

test_that("NA words, NA groups and empty words are clear errors", {
  need_pllscore()
  gpt2 <- tiny_gpt2()
  expect_error(pll_words(c("The", NA), c(1, 1), gpt2), "words has NA at 2", class = "pllscore_error")
  expect_error(pll_words(c("The", "cat"), c(1, NA), gpt2), "by has NA at 2", class = "pllscore_error")
  expect_error(pll_words(c("The", " "), c(1, 2), gpt2), "word 2 \\(group 2\\) is empty", class = "pllscore_error")
  expect_error(pll_words(c("The", "cat"), 1, gpt2), "by has 1 elements but words has 2", class = "pllscore_error")
  expect_error(pll_words(character(), character(), gpt2), "no words given", class = "pllscore_error")
  expect_error(pll_words("The", 1, tiny_bert(), bow = TRUE), class = "pllscore_error")
})

test_that("a masked LM's given words are masked whole by default: don't as a chain by transformers alone", {
  need_pllscore()
  bert <- tiny_bert()
  words <- c("I", "don't", "know", "NASA's", "plan.")  # BERT's tokenizer: don ' t, NASA ' s, plan .
  want <- unlist(py_list(py_ref()$whole_word_chain(shared_path("models", "tiny-bert-cased"), as.list(words))))
  got <- pll_words(words, rep(1, 5), bert)
  expect_equal(got, want, tolerance = 1e-5)
  by_tokenizer <- pll_words(words, rep(1, 5), bert, mask_by = "tokenizer")
  expect_gt(by_tokenizer[2] - got[2], 1)  # "don" read with "'t" visible is far likelier
  expect_equal(by_tokenizer[c(1, 3)], got[c(1, 3)], tolerance = 1e-6)  # one-token words: the same either way
  # a causal LM masks nothing: mask_by changes nothing
  gpt2 <- tiny_gpt2()
  expect_identical(pll_words(words, rep(1, 5), gpt2), pll_words(words, rep(1, 5), gpt2, mask_by = "tokenizer"))
})
