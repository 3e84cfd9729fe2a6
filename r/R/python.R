# Which Python runs pllscore, and the modules once imported. Python starts once per R session (reticulate),
# so the first call of any function here decides it.

.pll <- new.env(parent = emptyenv())
.pll$models <- new.env(parent = emptyenv())

# The Python to use and where it was found: PLLSCORE_PYTHON, else a .venv in the working directory or a folder
# above it (a pllscore checkout's), or the folder of option pllscore.venv, else none (reticulate's own choice).
find_python <- function() {
  given <- Sys.getenv("PLLSCORE_PYTHON")
  if (nzchar(given)) {
    if (!file.exists(given)) {
      stop_pll(sprintf("PLLSCORE_PYTHON is %s, which does not exist; set it to a Python that has pllscore", given))
    }
    return(list(path = absolute(given), source = "PLLSCORE_PYTHON"))
  }
  venv <- getOption("pllscore.venv")
  if (!is.null(venv)) {
    python <- venv_python(venv)
    if (is.null(python)) {
      stop_pll(sprintf("option pllscore.venv is %s, which holds no bin/python; give a virtual environment's folder", venv))
    }
    return(list(path = python, source = "option pllscore.venv"))
  }
  dir <- normalizePath(getwd(), mustWork = FALSE)
  repeat {
    python <- venv_python(file.path(dir, ".venv"))
    if (!is.null(python)) return(list(path = python, source = paste0(".venv in ", dir)))
    parent <- dirname(dir)
    if (identical(parent, dir)) break
    dir <- parent
  }
  list(path = NULL, source = "reticulate's default Python")
}

venv_python <- function(venv) {
  for (python in file.path(venv, c("bin/python", "Scripts/python.exe"))) {
    if (file.exists(python)) return(absolute(python))
  }
  NULL
}

# an absolute path whose links are kept: a venv's python is a link to the base Python, and only the link's path
# makes Python take the venv's packages
absolute <- function(path) {
  path <- path.expand(path)
  if (grepl("^(/|[A-Za-z]:[/\\\\])", path)) path else file.path(getwd(), path)
}

# pllscore and the bridge module (inst/python), imported once, unconverted: every conversion is explicit.
pll_py <- function() {
  if (!is.null(.pll$pllscore)) return(.pll$pllscore)
  started <- reticulate::py_available(initialize = FALSE)
  found <- if (started) list(path = NULL, source = "the Python already running in this R session") else find_python()
  if (!is.null(found$path)) {
    # RETICULATE_PYTHON for reticulate's start only: it comes before reticulate's guesses (a pyproject.toml in
    # the working directory makes reticulate 1.28 look for Poetry and warn)
    old <- Sys.getenv("RETICULATE_PYTHON", unset = NA)
    Sys.setenv(RETICULATE_PYTHON = found$path)
    on.exit(if (is.na(old)) Sys.unsetenv("RETICULATE_PYTHON") else Sys.setenv(RETICULATE_PYTHON = old), add = TRUE)
  }
  reticulate::py_config()
  python <- reticulate::py_exe()
  if (!reticulate::py_module_available("pllscore")) {
    stop_pll(sprintf(paste(
      "pllscore is not installed in the Python R uses (%s, %s);",
      "install it there (pip install pllscore) or, in a new R session,",
      "Sys.setenv(PLLSCORE_PYTHON = \"/path/to/.venv/bin/python\") of a Python that has it"
    ), python, found$source))
  }
  .pll$source <- found$source
  .pll$bridge <- reticulate::import_from_path("pllscore_r", system.file("python", package = "pllscore"),
                                              convert = FALSE)
  .pll$pllscore <- reticulate::import("pllscore", convert = FALSE)
  .pll$pllscore
}

#' The Python that runs pllscore
#'
#' Starts Python if no function has yet (see \code{\link{pllscore-package}} for how it is found) and
#' says which one runs.
#'
#' @return A list of class \code{pll_python}: \code{python} (its path), \code{python_version},
#'   \code{pllscore} (pllscore's version) and \code{source} (how it was found).
#' @export
pll_python <- function() {
  py <- pll_py()
  sys <- reticulate::import("sys", convert = TRUE)
  structure(list(
    python = reticulate::py_exe(),
    python_version = strsplit(sys$version, " ", fixed = TRUE)[[1]][1],
    pllscore = reticulate::py_to_r(py$`__version__`),
    source = .pll$source
  ), class = "pll_python")
}

#' @export
print.pll_python <- function(x, ...) {
  cat(sprintf("pllscore %s on Python %s\n  %s\n  (%s)\n", x$pllscore, x$python_version, x$python, x$source))
  invisible(x)
}
