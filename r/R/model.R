#' Load a model once
#'
#' Loads a model (a Hub name, a local folder or a GGUF file) as \code{pllscore.load} does and keeps it for
#' the R session: the same call again returns the loaded model, and every function of this package takes
#' either the result or the name (which it loads this way).
#'
#' @param model A Hub name, a folder or a GGUF file; or a \code{pll_model} (returned as it is).
#' @param device \code{"auto"} (CUDA, then MPS, then the CPU) or a torch device such as \code{"cpu"}.
#' @param dtype \code{NULL} (float32, exact), \code{"bfloat16"} or \code{"float16"}.
#' @param ... Other arguments of \code{pllscore.load}, by their Python names: \code{max_tokens},
#'   \code{metric}, \code{bos}, \code{long}, \code{stride}, \code{words}, \code{mask_by},
#'   \code{revision}, \code{kind}, \code{compile}, ... (integers as \code{64L}).
#' @param reload Load again even if the same model with the same arguments is loaded.
#' @return A \code{pll_model}: \code{name}, \code{kind} (\code{"masked"}, \code{"causal"} or
#'   \code{"seq2seq"}) and \code{scorer} (the Python scorer).
#' @examples
#' \dontrun{
#' gpt2 <- pll_model("gpt2", device = "cpu")
#' pll_score("The cat sat on the mat.", gpt2)
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
