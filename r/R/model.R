#' Load a model once
#'
#' Loads a model (a Hugging Face Hub name, a local folder or a GGUF file) and keeps it for
#' the R session: the same call again returns the loaded model, and every function of this package takes
#' either the result or the name (which it loads this way).
#'
#' @param model A Hub name, a folder or a GGUF file; or a \code{pll_model} (returned as it is).
#' @param device \code{"auto"} (CUDA, then MPS, then the CPU) or a torch device such as \code{"cpu"}.
#' @param dtype \code{NULL} (float32, exact), \code{"bfloat16"} or \code{"float16"}.
#' @param ... Further loading options by name: \code{max_tokens},
#'   \code{metric}, \code{bos}, \code{long}, \code{stride}, \code{words}, \code{mask_by},
#'   \code{revision}, \code{kind}, \code{compile}, ... (integers as \code{64L}).
#' @param reload Load again even if the same model with the same arguments is loaded.
#' @return A \code{pll_model}: \code{name}, \code{kind} (\code{"masked"}, \code{"causal"} or
#'   \code{"seq2seq"}) and \code{scorer} (the Python scorer).
#' @examples
#' # runs where the small test models and pllscore's Python are found (see ?pll_example_model)
#' folder <- pll_example_model("tiny-gpt2")
#' if (!is.null(folder)) {
#'   gpt2 <- pll_model(folder, device = "cpu")
#'   print(gpt2)
#'   pll_score("The cat sat on the mat.", gpt2)
#' }
#' @export
pll_model <- function(model, device = "auto", dtype = NULL, ..., reload = FALSE) {
  if (inherits(model, "pll_model")) return(model)
  if (!is.character(model) || length(model) != 1 || is.na(model)) {
    stop_pll("model must be one name, folder or file (a character string) or a pll_model", "InputError")
  }
  path <- if (file.exists(model)) normalizePath(model) else model
  key <- paste(deparse(list(path, device, dtype, list(...))), collapse = "")
  if (!reload && exists(key, envir = .pll$models, inherits = FALSE)) return(get(key, envir = .pll$models))
  py <- pll_py()
  scorer <- pll_call(py$load, path, device = device, dtype = dtype, ...)
  loaded <- structure(list(
    name = reticulate::py_to_r(scorer$name),
    kind = reticulate::py_to_r(scorer$kind),
    scorer = scorer
  ), class = "pll_model")
  assign(key, loaded, envir = .pll$models)
  loaded
}

#' @export
print.pll_model <- function(x, ...) {
  cat(sprintf("<pll_model %s: %s LM>\n", x$name, x$kind))
  invisible(x)
}

as_model <- function(model) pll_model(model)

#' The small models the examples and tests run on
#'
#' The examples of this package's help pages run on two small models trained for pllscore's tests
#' (\code{tiny-gpt2}, causal, and \code{tiny-bert-cased}, masked; 21 MB each, in the \code{models} folder
#' of the folder \code{shared} beside a pllscore checkout). This function finds one: in
#' \code{$PLLSCORE_SHARED/models}, else in a \code{shared/models} folder in the working directory or
#' the nearest folder above it that has one; and checks that the Python that runs pllscore starts. Where
#' either is missing it says why (and which variable to set) and returns \code{NULL}: the examples run
#' only where it returns a folder.
#'
#' @param name \code{"tiny-gpt2"} or \code{"tiny-bert-cased"}.
#' @return The model's folder, or \code{NULL} (invisibly, with a message saying why).
#' @examples
#' gpt2 <- pll_example_model("tiny-gpt2")
#' if (!is.null(gpt2)) print(pll_model(gpt2, device = "cpu"))
#' @export
pll_example_model <- function(name = c("tiny-gpt2", "tiny-bert-cased")) {
  name <- match.arg(name)
  shared <- shared_folder(name)
  why <- if (is.null(shared)) {
    sprintf(paste(
      "the small model %s is not found; set PLLSCORE_SHARED to the folder that holds models/%s",
      "(the folder shared beside a pllscore checkout)"
    ), name, name)
  } else {
    tryCatch({
      pll_py()
      NULL
    }, error = function(e) conditionMessage(e))
  }
  if (!is.null(why)) {
    message("pll_example_model: ", why)
    return(invisible(NULL))
  }
  file.path(shared, "models", name)
}

# the folder holding models/<name>: PLLSCORE_SHARED, else a shared/ folder in the working directory or above
shared_folder <- function(name = "tiny-gpt2") {
  given <- Sys.getenv("PLLSCORE_SHARED")
  if (nzchar(given)) return(if (dir.exists(file.path(given, "models", name))) normalizePath(given) else NULL)
  dir <- normalizePath(getwd(), mustWork = FALSE)
  repeat {
    if (dir.exists(file.path(dir, "shared", "models", name))) return(file.path(dir, "shared"))
    parent <- dirname(dir)
    if (identical(parent, dir)) return(NULL)
    dir <- parent
  }
}
