#' The likeliest next words
#'
#' For each text, the \code{k} likeliest words to come next (or the given
#' \code{candidates}), one row per text and rank.
#'
#' @param texts A character vector (no NA): the contexts.
#' @param model A \code{\link{pll_model}} or a name, folder or file.
#' @param k How many words per text.
#' @param word_tokens The most tokens a predicted word may have.
#' @param candidates Words to score instead of the \code{k} likeliest (optional): a character vector
#'   (the same words in every text), a list with one character vector per text (people's cloze
#'   responses), or a data.frame with columns \code{text_id} (the text, counted from 1 as in the
#'   result) and \code{word}. A word given twice in one text is scored once.
#' @param level \code{"word"} (the exact top-k words) or \code{"token"} (the top-k tokens, with
#'   the entropy of the distribution).
#' @param base The logarithm's base: \code{exp(1)} (nats, default) or \code{2} (bits).
#' @param surprisal Negated log-probabilities (the column is then \code{surprisal} or
#'   \code{surprisal_bits}; \code{prob} stays a probability).
#' @param ... Further options by name; one it does not take is an error that names those it does.
#' @return A data.frame, one row per text and rank: \code{text_id} (counted from 1), \code{text},
#'   \code{rank}, \code{word}, \code{logprob} (\code{logprob_bits}, \code{surprisal}, ... in
#'   another view), \code{prob}, \code{n_tokens}, \code{tokens}, and each text's \code{covered}
#'   mass, \code{entropy} (tokens only) and \code{complete} (\code{FALSE} where the word search
#'   stopped at its step budget with fewer than \code{k} words, with a warning; a text cut before its first
#'   word has one row of rank 0).
#' @examples
#' # runs where the small test models and pllscore's Python are found (see ?pll_example_model)
#' folder <- pll_example_model("tiny-bert-cased")
#' if (!is.null(folder)) {
#'   bert <- pll_model(folder, device = "cpu")
#'   print(pll_predict("The ___ sat on the mat.", bert, k = 5))
#'   print(pll_predict("The ___ sat on the mat.", bert, candidates = c("cat", "dog")))
#' }
#' @export
pll_predict <- function(texts, model, k = 10L, word_tokens = 3L, candidates = NULL, level = "word", base = exp(1),
                        surprisal = FALSE, ...) {
  texts <- check_texts(texts)
  model <- as_model(model)
  if (!reticulate::py_has_attr(model$scorer, "predict")) {
    stop_pll(sprintf(paste(
      "pll_predict needs Scorer.predict, which pllscore %s does not have;",
      "upgrade pllscore in %s"
    ), reticulate::py_to_r(pll_py()$`__version__`), reticulate::py_exe()), "ModelError")
  }
  rows <- pll_call(
    model$scorer$predict, as.list(texts), k = as_count(k, "k"), word_tokens = as_count(word_tokens, "word_tokens"),
    candidates = candidate_lists(candidates, length(texts)), level = level, ...
  )
  frame <- pll_call(.pll$bridge$prediction_frame, rows, base = py_base(base), surprisal = surprisal)
  py_frame(frame, positions = "text_id")
}

# candidates as Python takes them: one list for every text (a character vector), one list per text (a list of
# character vectors), or a data.frame with text_id (counted from 1, as pll_predict's rows) and word
candidate_lists <- function(candidates, n) {
  if (is.null(candidates)) return(NULL)
  if (is.data.frame(candidates)) {
    missing <- setdiff(c("text_id", "word"), names(candidates))
    if (length(missing)) {
      stop_pll(sprintf("a candidates data.frame needs columns text_id and word; it has no %s",
                       paste(missing, collapse = ", ")), "InputError")
    }
    id <- candidates$text_id
    if (!is.numeric(id)) stop_pll("candidates' text_id must be whole numbers, the texts counted from 1", "InputError")
    bad <- which(is.na(id) | id != round(id) | id < 1 | id > n)
    if (length(bad)) {
      stop_pll(sprintf("candidates' text_id %s (row %d) is not a text: give 1 to %d, as pll_predict counts texts",
                       format(id[bad[1]]), bad[1], n), "InputError")
    }
    candidates <- lapply(seq_len(n), function(i) candidates$word[id == i])
  }
  if (is.list(candidates)) {
    if (length(candidates) != n) {
      stop_pll(sprintf("%d lists of candidates for %d texts; give one list per text, or one character vector for all",
                       length(candidates), n), "InputError")
    }
    return(lapply(seq_along(candidates), function(i) {
      as.list(check_texts(candidates[[i]], sprintf("candidates of text %d", i)))
    }))
  }
  as.list(check_texts(candidates, "candidates"))
}
