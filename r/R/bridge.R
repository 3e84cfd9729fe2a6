# Calls into Python and tables across: a pllscore error becomes a one-line R error, frames move column by
# column with their types and NA (inst/python/pllscore_r.py holds the Python half).

stop_pll <- function(message, type = "PllscoreError") {
  stop(structure(
    class = c("pllscore_error", "error", "condition"),
    list(message = message, call = NULL, type = type)
  ))
}

# f(...) in Python; a pllscore error is an R error of class pllscore_error with its one line
pll_call <- function(f, ...) {
  pll_py()
  out <- .pll$bridge$call(f, ...)
  ok <- reticulate::py_to_r(out$`__getitem__`(0L))
  if (!ok) {
    stop_pll(reticulate::py_to_r(out$`__getitem__`(2L)), reticulate::py_to_r(out$`__getitem__`(1L)))
  }
  out$`__getitem__`(1L)
}

# column names that need no backticks: `surprisal:tiny-gpt2` -> surprisal_tiny_gpt2
r_names <- function(x) {
  x <- gsub("[^A-Za-z0-9_.]+", "_", x)
  x <- ifelse(grepl("^([A-Za-z]|[.][^0-9])", x), x, paste0("x", x))
  make.unique(x, sep = "_")
}

# a pandas DataFrame as a data.frame: each column by its kind, NA where pandas has a missing value;
# `positions` are 0-based position columns shown 1-based, as R counts
py_frame <- function(frame, positions = character()) {
  cols <- reticulate::py_to_r(.pll$bridge$columns(frame))
  out <- lapply(cols, function(col) {
    kind <- col[[2]]
    values <- col[[3]]
    v <- switch(kind,
      double = as.numeric(unlist(values)),
      integer = as.integer(unlist(values)),
      logical = as.logical(unlist(values)),
      character = as.character(unlist(values)),
      factor = factor(as.character(unlist(col[[5]]))[as.integer(unlist(values))], levels = as.character(unlist(col[[5]]))),
      list = lapply(values, function(x) if (is.null(x)) NULL else unlist(x))
    )
    if (kind != "list" && length(v) == 0) v <- vector(if (kind == "factor") "integer" else kind, 0)
    na <- as.integer(unlist(col[[4]]))
    if (length(na)) {
      if (kind == "list") v[na + 1L] <- list(NULL) else v[na + 1L] <- NA
    }
    v
  })
  names(out) <- vapply(cols, function(col) col[[1]], "")
  for (p in intersect(positions, names(out))) out[[p]] <- out[[p]] + 1L
  names(out) <- r_names(names(out))
  if (!length(out)) return(data.frame())
  list2DF(out)
}

# a data.frame as a pandas DataFrame: character, double, integer and logical columns keep their kind and NA
# (a factor goes as its text, a date as its ISO text)
r_frame <- function(data) {
  pll_py()
  kinds <- character()
  values <- list()
  nas <- list()
  for (name in names(data)) {
    v <- data[[name]]
    if (is.factor(v) || inherits(v, c("Date", "POSIXt"))) v <- as.character(v)
    kind <- if (is.logical(v)) "logical" else if (is.integer(v)) "integer" else if (is.numeric(v)) "double" else "character"
    na <- which(is.na(v)) - 1L  # a double's NaN too: pandas has one missing value
    filler <- switch(kind, logical = FALSE, integer = 0L, double = NaN, character = "")
    v <- if (kind == "character") as.character(v) else v
    v[is.na(v)] <- filler
    kinds <- c(kinds, kind)
    values[[length(values) + 1L]] <- v
    nas[[length(nas) + 1L]] <- na
  }
  .pll$bridge$frame(as.list(names(data)), as.list(kinds), values, nas)
}

# the texts of an R character vector, checked (NA: an error naming the element)
check_texts <- function(x, what = "texts") {
  if (is.factor(x)) x <- as.character(x)
  if (!is.character(x)) stop_pll(sprintf("%s must be a character vector, not %s", what, class(x)[1]), "InputError")
  bad <- which(is.na(x))
  if (length(bad)) {
    stop_pll(sprintf("%s has NA at %s; drop or fill those elements", what, paste(utils::head(bad, 5), collapse = ", ")),
             "InputError")
  }
  x
}

# R's log base as Python's: "e" for e
py_base <- function(base) {
  if (identical(base, "e") || (is.numeric(base) && length(base) == 1 && isTRUE(base == exp(1)))) "e" else base
}

progress_default <- function() interactive()
