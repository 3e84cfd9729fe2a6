#' Reading times: how well each model's surprisal predicts them
#'
#' The \code{pllscore.reading_times} pipeline (\code{pllscore reading-times}): each model's word surprisal
#' (bits; whitespace words, long texts in windows), then per model and measure the cross-validated
#' gain in log-likelihood per word (delta_ll) of a regression of reading times on length, frequency and
#' surprisal over one without surprisal, and the surprisal coefficient.
#'
#' @param data A data.frame with one row per displayed word (or per word and reader), a file (CSV, TSV,
#'   JSONL, Parquet) or the Natural Stories folder.
#' @param models One model or several: \code{\link{pll_model}}s or names (each loaded once).
#' @param text,position,word The columns of the text (story, sentence) id, the word's position in its
#'   text and the word as displayed (Natural Stories: \code{item}, \code{zone}, \code{word}).
#' @param measures The reading-time column(s) (Natural Stories: \code{meanItemRT}).
#' @param subject The reader of each row, for per-reader rows (a mixed model with random intercepts by
#'   reader, or averaged first with \code{aggregate = TRUE}).
#' @param aggregate Average per-reader rows per word first.
#' @param spillover How many preceding words' predictors enter the regressions.
#' @param range Rows whose measure lies outside \code{c(lo, hi)} (ms) are not fitted; \code{NULL}: all.
#' @param frequency \code{"wordfreq:LANG"} or a CSV/TSV file with columns \code{word} and \code{count}.
#' @param metric A masked LM's PLL metric (default word-l2r).
#' @param bow The BOW correction of word probabilities.
#' @param output A folder to write words.csv, fits.csv and meta.json into (optional).
#' @param progress Progress bars while scoring; by default in interactive sessions.
#' @return A list: \code{words} (one row per input word: \code{text}, \code{position}, \code{word},
#'   \code{length}, \code{zipf}, the measures, \code{<model>_surprisal_bits} and
#'   \code{<measure>_included}), \code{fits} (one row per model and measure: \code{model},
#'   \code{measure}, \code{n}, \code{delta_ll}, \code{delta_ll_se}, \code{coef}, \code{coef_se}) and
#'   \code{labels} (the models' labels). Column names are R names (\code{:} and \code{-} become
#'   \code{_}).
#' @export
pll_reading_times <- function(data, models, text = NULL, position = NULL, word = NULL, measures = NULL,
                              subject = NULL, aggregate = FALSE, spillover = 2L, range = c(100, 3000),
                              frequency = "wordfreq:en", metric = NULL, bow = FALSE, output = NULL,
                              progress = interactive()) {
  py <- pll_py()
  given <- if (is.data.frame(data)) r_frame(data) else path_arg(data, "data")
  scorers <- lapply(model_list(models), function(m) as_model(m)$scorer)
  if (!is.null(range)) range <- reticulate::tuple(as.list(as.numeric(range)))
  result <- pll_call(
    py$reading_times, given, scorers, output = output, measures = if (is.null(measures)) NULL else as.list(measures),
    text_column = text, position_column = position, word_column = word, subject_column = subject,
    aggregate = aggregate, spillover = as_count(spillover, "spillover"), value_range = range,
    frequency = frequency, metric = metric, bow = bow, progress = progress
  )
  list(
    words = py_frame(result$words),
    fits = py_frame(result$fits),
    labels = as.character(unlist(reticulate::py_to_r(result$labels)))
  )
}

#' BLiMP accuracy
#'
#' \code{pllscore.eval.runs.run_blimp}: each model scores the BLiMP pairs (masked LMs under
#' \code{metrics}, causal LMs by log-likelihood); a pair is right when the good sentence scores higher.
#'
#' @param models One model or several: \code{\link{pll_model}}s or names.
#' @param data The BLiMP folder (one JSONL file per paradigm).
#' @param paradigms Paradigm names (default: all).
#' @param limit Pairs per paradigm (default: all).
#' @param metrics A masked LM's PLL metrics.
#' @param output A folder to write the tables into (optional).
#' @param ... Other options of \code{run_blimp} by their Python names: \code{norm}, \code{unigram},
#'   \code{convention}, \code{force}, ...
#' @param progress Progress bars while scoring; by default in interactive sessions.
#' @return A list of data.frames: \code{pairs} (one row per pair, model and metric), \code{accuracy}
#'   (per paradigm) and \code{summary} (the paper's table: one row per model and metric).
#' @export
pll_blimp <- function(models, data, paradigms = NULL, limit = NULL, metrics = NULL, output = NULL, ...,
                      progress = interactive()) {
  run_blimp <- reticulate::import("pllscore.eval.runs", convert = FALSE)$run_blimp
  scorers <- lapply(model_list(models), function(m) as_model(m)$scorer)
  result <- pll_call(
    run_blimp, scorers, data = path_arg(data, "data"), paradigms = if (is.null(paradigms)) NULL else as.list(paradigms),
    limit = if (is.null(limit)) NULL else as_count(limit, "limit"), metrics = if (is.null(metrics)) NULL else as.list(metrics),
    output = output, progress = progress, ...
  )
  eval_frames(result)
}

#' Minimal pairs
#'
#' \code{pllscore.eval.runs.run_pairs}: each model scores both sentences of every pair; a pair is right
#' when the good one scores higher; accuracy overall and per \code{group}.
#'
#' @param data A data.frame or a file (CSV, TSV, JSONL, Parquet) with one row per pair.
#' @param models One model or several: \code{\link{pll_model}}s or names.
#' @param good,bad The columns of the good and the bad sentence.
#' @param group A column to group the accuracy by (optional).
#' @param metrics A masked LM's PLL metrics.
#' @param output A folder to write the tables into (optional).
#' @param ... Other options of \code{run_pairs} by their Python names: \code{norm}, \code{convention},
#'   \code{force}, ...
#' @param progress Progress bars while scoring; by default in interactive sessions.
#' @return A list of data.frames: \code{pairs}, \code{accuracy} and \code{summary}.
#' @export
pll_pairs <- function(data, models, good, bad, group = NULL, metrics = NULL, output = NULL, ...,
                      progress = interactive()) {
  run_pairs <- reticulate::import("pllscore.eval.runs", convert = FALSE)$run_pairs
  file <- if (is.data.frame(data)) {
    path <- tempfile(fileext = ".csv")
    on.exit(unlink(path), add = TRUE)
    .pll$bridge$write_csv(r_frame(data), path)
    path
  } else {
    path_arg(data, "data")
  }
  scorers <- lapply(model_list(models), function(m) as_model(m)$scorer)
  result <- pll_call(
    run_pairs, file, scorers, good = good, bad = bad, group = group,
    metrics = if (is.null(metrics)) NULL else as.list(metrics), output = output, progress = progress, ...
  )
  eval_frames(result)
}

eval_frames <- function(result) {
  list(pairs = py_frame(result$pairs), accuracy = py_frame(result$accuracy), summary = py_frame(result$summary))
}

model_list <- function(models) {
  if (inherits(models, "pll_model")) list(models) else as.list(models)
}

path_arg <- function(x, what) {
  if (!is.character(x) || length(x) != 1 || is.na(x)) {
    stop_pll(sprintf("%s must be a data.frame or one file or folder name", what), "InputError")
  }
  x
}

as_count <- function(x, what) {
  if (!is.numeric(x) || length(x) != 1 || is.na(x) || x != round(x)) {
    stop_pll(sprintf("%s must be one whole number, got %s", what, format(x)), "InputError")
  }
  as.integer(x)
}
