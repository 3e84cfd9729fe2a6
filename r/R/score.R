#' Score texts
#'
#' One row per text, word or token, as pllscore's own tables give
#' them: a masked LM's pseudo-log-likelihood under \code{metric}, a causal LM's log-likelihood.
#'
#' @param texts A character vector (no NA).
#' @param model A \code{\link{pll_model}} or a name, folder or file (loaded once by \code{pll_model}).
#' @param metric A masked LM's PLL metric(s): \code{"word-l2r"} (default), \code{"original"},
#'   \code{"whole-word"}, \code{"sentence-l2r"} or \code{"all"}. A causal or encoder-decoder LM's score
#'   is its log-likelihood: the default is then left out, and a metric given is an error.
#' @param level \code{"text"}, \code{"word"} or \code{"token"}.
#' @param base The logarithm's base: \code{exp(1)} (nats, default) or \code{2} (bits).
#' @param surprisal Negated log-probabilities (the column is then \code{surprisal}, not \code{logprob}).
#' @param ... Further scoring options by name: \code{context}, \code{sep},
#'   \code{words} (\code{"whitespace"}, \code{"tokenizer"}), \code{word_sep}, \code{mask_by},
#'   \code{word_prob} (\code{"bow"}), \code{long} (\code{"window"}), \code{outputs}, \code{convention}.
#' @param progress A progress bar (on stderr) while scoring; by default in interactive sessions.
#' @return A data.frame. \code{text_id} is the text's position in \code{texts}, \code{word_id} and
#'   \code{token_id} positions in the text, all counted from 1 (Python counts from 0); \code{start} and
#'   \code{end} are character offsets counted from 0 (\code{substr(text, start + 1, end)}). Text rows have
#'   \code{logprob} and \code{logprob_mean}, word and token rows \code{logprob} (with a view: \code{surprisal_bits}, ...); \code{unit}
#'   says nats or bits.
#' @examples
#' # runs where the small test models and pllscore's Python are found (see ?pll_example_model)
#' folder <- pll_example_model("tiny-bert-cased")
#' if (!is.null(folder)) {
#'   bert <- pll_model(folder, device = "cpu")
#'   print(pll_score(c("The cat sat.", "The cat sit."), bert, metric = c("original", "word-l2r")))
#'   print(pll_score("The cat sat.", bert, level = "word", base = 2, surprisal = TRUE))
#' }
#' @export
pll_score <- function(texts, model, metric = "word-l2r", level = c("text", "word", "token"), base = exp(1),
                      surprisal = FALSE, ..., progress = interactive()) {
  texts <- check_texts(texts)
  level <- match.arg(level)
  model <- as_model(model)
  options <- list(...)
  if (model$kind == "masked" || !missing(metric)) options$metric <- as.list(metric)
  results <- do.call(pll_call, c(list(model$scorer$score, as.list(texts), progress = progress), options))
  py_level <- if (level == "text") "sentence" else level
  frame <- pll_call(pll_py()$to_frame, results, py_level, base = py_base(base), surprisal = surprisal)
  py_frame(frame, positions = c("text_id", "word_id", "token_id"))
}

#' Word log-probabilities or surprisals in a long data frame
#'
#' The psycholinguist's shape: a vector of words and a grouping vector (sentence, item or story id) give
#' one value per word, in input order: the word's log-probability (or surprisal) in its group's text, the
#' group's words joined by \code{sep} in input order. Each group is scored once, with the words as given
#' (as \code{pll_score(texts, words = <the words>, word_sep = sep)} scores them): a causal LM with the BOW correction
#' of word probabilities (\code{word_prob = "bow"}, which needs a tokenizer that marks word beginnings,
#' as GPT-2's and SentencePiece's do), a masked LM by \code{metric} (word-l2r by default) with each
#' given word masked whole (\code{mask_by = "words"}).
#'
#' A masked LM's word-l2r masks a word's first token and every later token of the word, then the next
#' token with the rest still masked, and so on. The words given are what a reader saw, so by default
#' they are masked whole: \code{"don't"} is scored with none of its pieces visible. \code{mask_by =
#' "tokenizer"} masks the tokenizer's words instead (Kauf and Ivanova's word-l2r: BERT's tokenizer
#' splits \code{"don't"} into \code{don}, \code{'} and \code{t}, and reads \code{don} with
#' \code{'t} visible, which makes it far likelier).
#'
#' @param words A character vector of words (no NA, none empty).
#' @param by A vector as long as \code{words}: each word's group (no NA). Groups keep the order in which
#'   they first appear; the words of a group keep their order.
#' @param model A \code{\link{pll_model}} or a name, folder or file.
#' @param sep What joins the words of a group (default one space; \code{""} for text written without
#'   spaces).
#' @param base The logarithm's base: \code{exp(1)} (nats, default) or \code{2} (bits).
#' @param surprisal Negated log-probabilities.
#' @param metric A masked LM's PLL metric (default word-l2r); left out for other LMs.
#' @param mask_by What a masked LM's word-l2r and whole-word mask: \code{"words"} (default: each given
#'   word whole) or \code{"tokenizer"} (the tokenizer's words). Other LMs mask nothing.
#' @param bow The BOW correction (default: for a causal LM).
#' @param ... Further options of \code{pll_score}: \code{long = "window"} scores texts longer than the
#'   model allows in windows; \code{context}, ...
#' @param progress A progress bar while scoring; by default in interactive sessions.
#' @return A numeric vector as long as \code{words}.
#' @examples
#' # runs where the small test models and pllscore's Python are found (see ?pll_example_model)
#' folder <- pll_example_model("tiny-gpt2")
#' if (!is.null(folder)) {
#'   d <- data.frame(item = c(1, 1, 1, 2, 2), word = c("The", "cat", "sat.", "Dogs", "bark."))
#'   d$surprisal <- pll_words(d$word, d$item, pll_model(folder, device = "cpu"), base = 2, surprisal = TRUE)
#'   print(d)
#' }
#' @export
pll_words <- function(words, by, model, sep = " ", base = exp(1), surprisal = FALSE, metric = "word-l2r",
                      mask_by = "words", bow = NULL, ..., progress = interactive()) {
  words <- check_texts(words, "words")
  if (length(by) != length(words)) {
    stop_pll(sprintf("by has %d elements but words has %d; give one group per word", length(by), length(words)),
             "InputError")
  }
  bad <- which(is.na(by))
  if (length(bad)) {
    stop_pll(sprintf("by has NA at %s; give every word a group", paste(utils::head(bad, 5), collapse = ", ")),
             "InputError")
  }
  empty <- which(!nzchar(trimws(words)))
  if (length(empty)) {
    stop_pll(sprintf("word %d (group %s) is empty; drop it or merge it with its neighbour",
                     empty[1], format(by[empty[1]])), "InputError")
  }
  if (!length(words)) stop_pll("no words given; words is empty", "InputError")
  model <- as_model(model)
  groups <- unique(by)
  rows <- split(seq_along(words), factor(by, levels = groups))
  lists <- lapply(rows, function(i) as.list(words[i]))
  texts <- vapply(lists, function(w) paste(unlist(w), collapse = sep), "")
  options <- list(...)
  if (model$kind %in% c("masked", "mntp")) {  # the kinds scored by a PLL
    options$metric <- metric
    options$mask_by <- mask_by
  }
  if (is.null(bow)) bow <- model$kind == "causal"
  if (bow) options$word_prob <- "bow"
  results <- do.call(pll_call, c(list(model$scorer$score, unname(as.list(texts)), words = unname(lists),
                                      word_sep = sep, progress = progress), options))
  view <- pll_call(results$view, base = py_base(base), surprisal = surprisal)
  values <- reticulate::py_to_r(.pll$bridge$word_scores(view))
  out <- numeric(length(words))
  for (g in seq_along(rows)) out[rows[[g]]] <- as.numeric(unlist(values[[g]]))
  out
}
