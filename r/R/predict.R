#' The likeliest next words
#'
#' \code{Scorer.predict}: for each text, the \code{k} likeliest words to come next (or the given
#' \code{candidates}), one row per text and rank.
#'
#' @param texts A character vector (no NA): the contexts.
#' @param model A \code{\link{pll_model}} or a name, folder or file.
#' @param k How many words per text.
#' @param word_tokens The most tokens a predicted word may have.
#' @param candidates Words to score instead of the \code{k} likeliest (optional).
#' @param level \code{"word"} or \code{"token"}.
#' @param ... Other options of \code{Scorer.predict} by their Python names.
#' @return A data.frame: \code{text_id} (counted from 1), \code{text}, \code{rank}, \code{word},
#'   \code{logprob}, \code{prob}, \code{n_tokens}, \code{tokens}.
#' @export
pll_predict <- function(texts, model, k = 10L, word_tokens = 3L, candidates = NULL, level = "word", ...) {
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
    candidates = if (is.null(candidates)) NULL else as.list(check_texts(candidates, "candidates")),
    level = level, ...
  )
  py_frame(.pll$bridge$as_frame(rows), positions = "text_id")
}
