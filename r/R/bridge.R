# Calls into Python and tables across: a pllscore error becomes a one-line R error, frames move column by
# column with their types and NA (inst/python/pllscore_r.py holds the Python half).

stop_pll <- function(message, type = "PllscoreError") {
  stop(structure(
    class = c("pllscore_error", "error", "condition"),
    list(message = r_terms(message), call = NULL, type = type)
  ))
}

warn_pll <- function(message, type = "PllscoreWarning") {
  warning(structure(
    class = c("pllscore_warning", "warning", "condition"),
    list(message = r_terms(message), call = NULL, type = type)
  ))
}

# what a message names that the user never gave: the CSV file a data.frame crossed to Python in
r_terms <- function(message) {
  temp <- gsub("([][{}()+*^$|\\\\?.])", "\\\\\\1", tempdir())
  gsub(sprintf("'?%s/file[0-9a-f]+[.][a-z]+'?", temp), "the data frame given", message)
}

# f(...) in Python; an error is an R error of class pllscore_error with its one line in R's terms, pllscore's
# warnings R warnings of class pllscore_warning (inst/python/pllscore_r.py's call)
pll_call <- function(f, ...) {
  pll_py()
  check_options(f, names(list(...)))
  out <- .pll$bridge$call(f, ...)
  item <- function(i) out$`__getitem__`(as.integer(i))
  ok <- reticulate::py_to_r(item(0L))
  for (w in reticulate::py_to_r(item(if (ok) 2L else 3L))) warn_pll(w[[2]], w[[1]])
  if (!ok) stop_pll(reticulate::py_to_r(item(2L)), reticulate::py_to_r(item(1L)))
  item(1L)
}

# an option the Python function does not take: one line naming the R function called and what it takes
check_options <- function(f, given) {
  given <- given[nzchar(given)]
  if (!length(given)) return(invisible())
  takes <- reticulate::py_to_r(.pll$bridge$keywords(f))
  if (is.null(takes)) return(invisible())
  unknown <- setdiff(given, unlist(takes))
  if (!length(unknown)) return(invisible())
  caller <- r_caller()
  loads <- unlist(reticulate::py_to_r(.pll$bridge$keywords(.pll$pllscore$load)))
  hint <- if (caller != "pll_model" && unknown[1] %in% loads) {
    sprintf("; %s is an argument of pll_model(): load the model with it, pll_model(name, %s = ...)", unknown[1], unknown[1])
  } else {
    r_args <- if (caller == "this function") character() else names(formals(getExportedValue("pllscore", caller)))
    r_args <- setdiff(r_args, "...")
    sprintf("; it takes %s", paste(unique(c(r_args, unlist(takes))), collapse = ", "))
  }
  stop_pll(sprintf("%s() has no argument %s%s", caller, paste(unknown, collapse = ", "), hint), "InputError")
}

# the exported function the user called (the outermost on the stack)
r_caller <- function() {
  exported <- getNamespaceExports("pllscore")
  for (call in sys.calls()) {
    fn <- call[[1]]
    name <- if (is.name(fn)) as.character(fn) else if (is.call(fn) && length(fn) == 3) as.character(fn[[3]]) else ""
    if (length(name) == 1 && name %in% exported) return(name)
  }
  "this function"
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
