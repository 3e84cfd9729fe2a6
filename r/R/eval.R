#' Reading times: how well each model's surprisal predicts them
#'
#' pllscore's reading-times pipeline (the command line's \code{pllscore reading-times}): each model's word surprisal
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
#' @param mask_by A masked LM's word-l2r and whole-word mask: \code{"words"} (default: each displayed
#'  word whole, \code{"don't"} with none of its pieces visible) or \code{"tokenizer"} (the
#'  tokenizer's words, Kauf and Ivanova's word-l2r); see \code{\link{pll_words}}.
#' @param bow The BOW correction of word probabilities.
#' @param output A folder to write words.csv, fits.csv and meta.json into (optional).
#' @param progress Progress bars while scoring; by default in interactive sessions.
#' @return A list: \code{words}, \code{fits} (one row per model and measure: \code{model},
#'   \code{measure}, \code{n}, \code{delta_ll}, \code{delta_ll_se}, \code{coef}, \code{coef_se}) and
#'   \code{labels} (the models' labels, as in \code{pll_pairs} and \code{pll_blimp}). \code{words}
#'   has the input's rows in the input's order: a data.frame's own columns as given (their types and
#'   row names kept, so \code{data$x <- result$words$x} and joins line up), then \code{length},
#'   \code{zipf}, \code{<label>_surprisal_bits}, \code{<measure>_included} and \code{text_key}
#'   (the text column's values as given: an integer id stays integer); an input column of one of
#'   those names is replaced. From a file or folder: \code{text_key}, \code{position}, \code{word},
#'   the same new columns and the measures, rows in the file's order. With \code{aggregate = TRUE}:
#'   one row per word, texts in the order they first appear and words by position. Column names are
#'   R names (\code{:} and \code{-} become \code{_}).
#' @examples
#' # runs where the small test models, Natural Stories and pllscore's Python are found (see ?pll_example_model)
#' folder <- pll_example_model("tiny-gpt2")
#' ns <- if (is.null(folder)) "" else file.path(dirname(dirname(folder)), "data", "naturalstories", "processed_wordinfo.tsv")
#' if (file.exists(ns)) {
#'   ns <- utils::read.delim(ns, quote = "", na.strings = character(0))
#'   ns <- ns[ns$zone <= 60, ]
#'   rt <- pll_reading_times(ns, pll_model(folder, device = "cpu"), text = "item", position = "zone",
#'                           word = "word", measures = "meanItemRT")
#'   print(rt$fits)
#' }
#' @export
pll_reading_times <- function(data, models, text = NULL, position = NULL, word = NULL, measures = NULL,
                              subject = NULL, aggregate = FALSE, spillover = 2L, range = c(100, 3000),
                              frequency = "wordfreq:en", metric = NULL, mask_by = "words", bow = FALSE,
                              output = NULL, progress = interactive()) {
  py <- pll_py()
  given <- if (is.data.frame(data)) r_frame(data) else path_arg(data, "data")
  scorers <- lapply(model_list(models), function(m) as_model(m)$scorer)
  if (!is.null(range)) range <- reticulate::tuple(as.list(as.numeric(range)))
  result <- pll_call(
    py$reading_times, given, scorers, output = output, measures = if (is.null(measures)) NULL else as.list(measures),
    text_column = text, position_column = position, word_column = word, subject_column = subject,
    aggregate = aggregate, spillover = as_count(spillover, "spillover"), value_range = range,
    frequency = frequency, metric = metric, mask_by = mask_by, bow = bow, progress = progress
  )
  rows <- as.integer(unlist(reticulate::py_to_r(.pll$bridge$input_rows(result)))) + 1L
  list(
    words = rt_words(py_frame(result$words), rows, data, text, measures, aggregate),
    fits = py_frame(result$fits),
    labels = as.character(unlist(reticulate::py_to_r(result$labels)))
  )
}

# the words table in R's shape: a data.frame's rows in its order, all its columns (their types kept) and the
# new ones after them (text_key: the text column's values as given; a column of the input named like a new one
# is replaced); a file's rows in the file's order; with aggregate, one row per word (texts in first-appearance
# order, words by position). `rows`: each row's input row.
rt_words <- function(words, rows, data, text, measures, aggregate) {
  if (aggregate || length(rows) != nrow(words)) {
    if (is.data.frame(data) && length(rows) == nrow(words)) words$text_key <- data[[text]][rows]
    return(words)
  }
  words <- words[order(rows), , drop = FALSE]
  rownames(words) <- NULL
  if (!is.data.frame(data)) return(words)
  echoed <- c("text_key", "position", "word", "subject", r_names(as.character(measures)))
  added <- words[setdiff(names(words), echoed)]
  added$text_key <- data[[text]]
  out <- data
  for (name in names(added)) out[[name]] <- added[[name]]
  out
}

#' BLiMP accuracy
#'
#' Each model scores the BLiMP pairs (masked LMs under
#' \code{metrics}, causal LMs by log-likelihood); a pair is right when the good sentence scores higher.
#'
#' @param data The BLiMP folder (one JSONL file per paradigm). The order of earlier versions,
#'  \code{pll_blimp(models, data)}, still works.
#' @param models One model or several: \code{\link{pll_model}}s or names.
#' @param paradigms Paradigm names (default: all).
#' @param limit Pairs per paradigm (default: all).
#' @param metrics A masked LM's PLL metrics.
#' @param output A folder to write the tables into (optional).
#' @param ... Further options by name: \code{norm}, \code{unigram},
#'   \code{convention}, \code{force}, ...
#' @param progress Progress bars while scoring; by default in interactive sessions.
#' @return A list of data.frames: \code{pairs} (one row per pair, model and metric; \code{pair_id} is
#'   BLiMP's pair number counted from 1), \code{accuracy} (per model, metric and paradigm) and
#'   \code{summary} (one row per model and metric: \code{overall}, the mean of the paradigms'
#'   accuracies, \code{overall_<norm>} per norm, and one column per phenomenon run, the mean of its
#'   paradigms). Accuracy is a proportion (0 to 1) in every table, not rounded; \code{model} is the
#'   label \code{pll_reading_times} gives (\code{tiny_gpt2}).
#' @examples
#' # runs where the small test models, their BLiMP copy and pllscore's Python are found (see ?pll_example_model)
#' folder <- pll_example_model("tiny-gpt2")
#' blimp <- if (is.null(folder)) "" else file.path(dirname(dirname(folder)), "data", "blimp")
#' if (dir.exists(blimp)) {
#'   res <- pll_blimp(blimp, pll_model(folder, device = "cpu"), paradigms = "anaphor_gender_agreement", limit = 20)
#'   print(res$summary)
#' }
#' @export
pll_blimp <- function(data, models, paradigms = NULL, limit = NULL, metrics = NULL, output = NULL, ...,
                      progress = interactive()) {
  if (models_first(data, models)) {  # the order of earlier versions, pll_blimp(models, data)
    swapped <- data
    data <- models
    models <- swapped
  }
  run_blimp <- pll_import("pllscore.eval.runs")$run_blimp
  scorers <- lapply(model_list(models), function(m) as_model(m)$scorer)
  result <- pll_call(
    run_blimp, scorers, data = path_arg(data, "data"), paradigms = if (is.null(paradigms)) NULL else as.list(paradigms),
    limit = if (is.null(limit)) NULL else as_count(limit, "limit"), metrics = if (is.null(metrics)) NULL else as.list(metrics),
    output = output, progress = progress, ...
  )
  out <- eval_frames(result, "accuracy", "phenomenon", blimp_phenomena())
  if (grepl("^[0-9]+$", paste(out$pairs$pair_id, collapse = ""))) out$pairs$pair_id <- as.integer(out$pairs$pair_id) + 1L
  out
}

#' Minimal pairs
#'
#' Each model scores both sentences of every pair; a pair is right
#' when the good one scores higher; accuracy overall and per \code{group}.
#'
#' @param data A data.frame or a file (CSV, TSV, JSONL, Parquet) with one row per pair.
#' @param models One model or several: \code{\link{pll_model}}s or names.
#' @param good,bad The columns of the good and the bad sentence.
#' @param group A column to group the accuracy by (optional).
#' @param metrics A masked LM's PLL metrics.
#' @param output A folder to write the tables into (optional).
#' @param ... Further options by name: \code{norm}, \code{convention},
#'   \code{force}, ...
#' @param progress Progress bars while scoring; by default in interactive sessions.
#' @return A list of data.frames: \code{pairs} (\code{pair_id}, the pair's row in \code{data} counted
#'   from 1, then the input's columns, a data.frame's with their types, then \code{model},
#'   \code{model_id}, \code{model_name}, \code{metric}, \code{good_logprob}, \code{bad_logprob},
#'   \code{correct}), \code{accuracy} (per model, metric and \code{group}) and \code{summary} (one
#'   row per model and metric: \code{overall}, \code{overall_<norm>} per norm, one column per group).
#'   Accuracy is a proportion (0 to 1) in every table, not rounded; \code{model} is the label
#'   \code{pll_reading_times} gives (\code{tiny_gpt2}).
#' @examples
#' # runs where the small test models and pllscore's Python are found (see ?pll_example_model)
#' folder <- pll_example_model("tiny-gpt2")
#' if (!is.null(folder)) {
#'   pairs <- data.frame(good = c("The cats sleep.", "She saw herself."), bad = c("The cats sleeps.", "She saw himself."))
#'   print(pll_pairs(pairs, pll_model(folder, device = "cpu"), good = "good", bad = "bad")$summary)
#' }
#' @export
pll_pairs <- function(data, models, good, bad, group = NULL, metrics = NULL, output = NULL, ...,
                      progress = interactive()) {
  run_pairs <- pll_import("pllscore.eval.runs")$run_pairs
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
  out <- eval_frames(result, "correct", group)
  # each pair's row in the input, counted from 1, first; a data.frame's columns as given (their types kept)
  blocks <- paste(out$pairs$model_id, out$pairs$metric)
  pair_id <- stats::ave(seq_along(blocks), blocks, FUN = seq_along)
  if (is.data.frame(data) && all(pair_id <= nrow(data))) {
    for (name in intersect(names(data), names(out$pairs))) out$pairs[[name]] <- data[[name]][pair_id]
  }
  out$pairs <- cbind(data.frame(pair_id = as.integer(pair_id)), out$pairs)
  out
}

# pairs, accuracy and summary in R's shape: `model` the label reading-times gives (tiny_gpt2), accuracy a proportion
# everywhere; the summary rebuilt from `value` (a pair's correct, a paradigm's accuracy), one column per `by`
# value present (phenomena in `order`), unrounded, `overall` lowercase
eval_frames <- function(result, value, by = NULL, order = NULL) {
  summary <- .pll$bridge$eval_summary(
    if (value == "correct") result$pairs else result$accuracy, value, by, if (is.null(order)) NULL else as.list(order)
  )
  out <- list(pairs = py_frame(result$pairs), accuracy = py_frame(result$accuracy), summary = py_frame(summary))
  lapply(out, function(frame) {
    if ("model" %in% names(frame)) {
      frame$model <- as.character(unlist(reticulate::py_to_r(.pll$bridge$model_labels(as.list(frame$model)))))
    }
    frame
  })
}

blimp_phenomena <- function() {
  as.character(unlist(reticulate::py_to_r(pll_import("pllscore.eval.blimp")$PHENOMENA)))
}

# pll_blimp(models, data), the order of earlier versions: models first, then the BLiMP folder
models_first <- function(data, models) {
  is_models <- function(x) inherits(x, "pll_model") || (is.list(x) && length(x) && all(vapply(x, inherits, NA, "pll_model")))
  folder <- function(x) is.character(x) && length(x) == 1 && !is.na(x) && dir.exists(x)
  (is_models(data) && !is_models(models)) || (!folder(data) && folder(models) && is.character(data))
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
