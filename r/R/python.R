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
  python <- venv_python(pll_venv())
  if (!is.null(python)) return(list(path = python, source = "pll_install()'s environment"))
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
# Every path into Python starts here (or in pll_import), so that the first call of any function finds the Python
# find_python() names, never reticulate's default.
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
  bridge <- reticulate::import_from_path("pllscore_r", system.file("python", package = "pllscore"), convert = FALSE)
  # before anything imports torch: its BLAS, not the one R loaded, must do its matrix products (the same numbers
  # as a Python process's, at its speed)
  note <- reticulate::py_to_r(bridge$bind_torch_blas())
  if (nzchar(note)) warn_pll(note)
  if (!reticulate::py_to_r(bridge$has_pllscore())) {
    stop_pll(sprintf(paste(
      "pllscore is not installed in the Python R uses (%s, %s); run pll_install(\"path/to/pllscore\")",
      "with a pllscore checkout (or make r in the checkout, which builds its .venv), then restart R;",
      "or, in a new R session, Sys.setenv(PLLSCORE_PYTHON = \"/path/to/.venv/bin/python\") of a Python that has it"
    ), python, found$source))
  }
  .pll$source <- found$source
  .pll$bridge <- bridge
  .pll$pllscore <- reticulate::import("pllscore", convert = FALSE)
  .pll$pllscore
}

# a module of pllscore (or any module) in pllscore's Python, unconverted
pll_import <- function(module) {
  pll_py()
  reticulate::import(module, convert = FALSE)
}

#' The Python that runs pllscore
#'
#' Starts Python if no function has yet (see \code{\link{pllscore-package}} for how it is found) and
#' says which one runs.
#'
#' @return A list of class \code{pll_python}: \code{python} (its path), \code{python_version},
#'   \code{pllscore} (pllscore's version) and \code{source} (how it was found).
#' @examples
#' # runs where pllscore's Python is found (see ?pll_example_model)
#' if (!is.null(pll_example_model())) print(pll_python())
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

# where pll_install() puts its virtual environment, and find_python() looks for it
pll_venv <- function() {
  given <- getOption("pllscore.install_dir")
  if (!is.null(given)) return(given)
  file.path(tools::R_user_dir("pllscore", "data"), "venv")
}

#' Install pllscore's Python side
#'
#' Makes a Python virtual environment and installs pllscore (and torch, transformers, ...) into it with
#' pip; every function of this package then finds it, in a new R session (see \code{\link{pllscore-package}}
#' for the order in which a Python is looked for). pllscore is not on the Python Package Index: give a
#' pllscore checkout (the folder holding its \code{pyproject.toml}) or a wheel file. In a checkout on Debian
#' or Ubuntu, \code{make r} builds the checkout's \code{.venv} (the locked, tested versions) and installs
#' this package, which finds that \code{.venv} from the working directory or any folder below it.
#'
#' @param source A pllscore checkout or wheel file, or anything else \code{pip install} takes; by default
#'   the checkout that holds the working directory.
#' @param envname The virtual environment's folder; by default
#'   \code{file.path(tools::R_user_dir("pllscore", "data"), "venv")}, or option \code{pllscore.install_dir}.
#' @param python The Python (3.10 or later) to make it with.
#' @param pip_args More arguments of \code{pip install}, such as
#'   \code{c("--extra-index-url", "https://download.pytorch.org/whl/cpu")} for torch's CPU build.
#' @return The environment's Python, invisibly.
#' @examples
#' # where it installs by default
#' file.path(tools::R_user_dir("pllscore", "data"), "venv")
#' \dontrun{
#' # downloads torch and transformers (about a GB): not run by the checks
#' pll_install("~/src/pllscore")
#' }
#' @export
pll_install <- function(source = NULL, envname = NULL, python = NULL, pip_args = character()) {
  source <- if (is.null(source)) find_checkout() else path.expand(source)
  if (is.null(source)) {
    stop_pll(paste(
      "no pllscore checkout holds the working directory; give source = the folder of a pllscore checkout",
      "or a pllscore wheel (pllscore is not on the Python Package Index)"
    ), "InputError")
  }
  envname <- path.expand(if (is.null(envname)) pll_venv() else envname)
  if (is.null(python)) python <- Sys.which("python3")
  if (!nzchar(python)) python <- Sys.which("python")
  if (!nzchar(python)) stop_pll("no python3 on the PATH; give python = a Python 3.10 or later", "InputError")
  run <- function(command, args, what) {
    message(what)
    status <- system2(command, shQuote(args))
    if (!identical(status, 0L)) {
      stop_pll(sprintf("%s failed (exit status %s): %s %s", what, status, command, paste(args, collapse = " ")),
               "InstallError")
    }
  }
  run(python, c("-m", "venv", envname), sprintf("making the virtual environment %s", envname))
  venv <- venv_python(envname)
  run(venv, c("-m", "pip", "install", pip_args, if (dir.exists(source)) normalizePath(source) else source),
      sprintf("installing pllscore from %s", source))
  message(sprintf("pllscore is installed in %s; restart R to use it", envname))
  invisible(venv)
}

# the pllscore checkout that holds the working directory: the nearest folder whose pyproject.toml names pllscore
find_checkout <- function() {
  dir <- normalizePath(getwd(), mustWork = FALSE)
  repeat {
    project <- file.path(dir, "pyproject.toml")
    if (file.exists(project) && any(grepl("^name *= *\"pllscore\"", readLines(project, warn = FALSE)))) return(dir)
    parent <- dirname(dir)
    if (identical(parent, dir)) return(NULL)
    dir <- parent
  }
}
