# The shared tiny models and data: PLLSCORE_SHARED (the Makefile's and the Python tests' ../shared), else a
# shared/ folder beside the working directory or a folder above it. Where neither they nor a Python with
# pllscore are found the tests skip, each saying why and which variable makes it run (?pllscore, "Examples and
# tests"), unless PLLSCORE_R_REQUIRE=1 (make test), where that is a failure.

shared_dir <- function() {
  given <- Sys.getenv("PLLSCORE_SHARED")
  if (nzchar(given)) return(normalizePath(given))
  dir <- normalizePath(getwd())
  repeat {
    if (dir.exists(file.path(dir, "shared", "models", "tiny-gpt2"))) return(file.path(dir, "shared"))
    parent <- dirname(dir)
    if (identical(parent, dir)) return(NULL)
    dir <- parent
  }
}

need_pllscore <- function() {
  shared <- shared_dir()
  why <- if (is.null(shared)) {
    paste("the small test models are not found: set PLLSCORE_SHARED to the folder that holds models/tiny-gpt2",
          "(the shared folder beside a pllscore checkout)")
  } else {
    tryCatch({
      pllscore::pll_python()
      NULL
    }, error = function(e) paste0("no Python with pllscore: set PLLSCORE_PYTHON to one (", conditionMessage(e), ")"))
  }
  if (is.null(why)) return(invisible(shared))
  if (identical(Sys.getenv("PLLSCORE_R_REQUIRE"), "1")) stop(why, call. = FALSE)
  testthat::skip(paste0(why, "; PLLSCORE_R_REQUIRE=1 makes this a failure"))
}

shared_path <- function(...) file.path(need_pllscore(), ...)

# each tiny model loaded once for the whole run (pll_model keeps it)
tiny_gpt2 <- function() pllscore::pll_model(shared_path("models", "tiny-gpt2"), device = "cpu")
tiny_bert <- function() pllscore::pll_model(shared_path("models", "tiny-bert-cased"), device = "cpu")

# the Python API's own numbers, read in plain lists (no conversion of pandas or numpy by reticulate)
py_ref <- function() reticulate::import_from_path("pllscore_r_reference", normalizePath("."), convert = FALSE)

py_list <- function(x) reticulate::py_to_r(x)

# a column of a pandas frame as an R vector (None -> NA)
py_column <- function(frame, name) {
  values <- py_list(py_ref()$column(frame, name))
  unlist(lapply(values, function(v) if (is.null(v)) NA else v))
}

pllscore_py <- function() reticulate::import("pllscore", convert = FALSE)
