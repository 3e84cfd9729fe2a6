#' pllscore: language-model scores from R
#'
#' Every number comes from the pllscore Python package, through reticulate; nothing is scored in R.
#'
#' @section Which Python:
#' The first call of any function decides, once per R session: the Python named by the environment
#' variable \code{PLLSCORE_PYTHON}; else the virtual environment named by \code{options(pllscore.venv = )};
#' else a \code{.venv} in the working directory or the nearest folder above it that has one (a pllscore
#' checkout's, which \code{make r} builds); else the environment \code{\link{pll_install}} made; else
#' reticulate's own choice. \code{\link{pll_python}} says which one runs and the version of pllscore it
#' has. pllscore is not on the Python Package Index: \code{make r} in a checkout, or
#' \code{pll_install("path/to/checkout")}, installs it.
#'
#' @section Numbers:
#' Every number equals the one a Python process of its own gives for the same call (the package's
#' tests compare them across processes). R links a BLAS of its own (the reference BLAS, OpenBLAS, ...)
#' and loads it before Python starts; so that torch's matrix products still run on torch's own BLAS
#' (other numbers, and several times slower, otherwise), the first call loads torch's CPU library bound
#' to its own symbols before torch is imported. Where something imported torch into R's Python earlier,
#' a warning says so.
#'
#' @section Errors and warnings:
#' An error of pllscore (bad input, a model that cannot be loaded, an argument a function does not take)
#' is an R error of class \code{pllscore_error} carrying one line in R's terms: texts counted from 1,
#' arguments as R writes them (\code{long = "window"}); its \code{type} is the Python error's
#' (\code{InputError}, \code{ModelError}, ...). pllscore's warnings (such as the one about too little
#' reading-time data) are R warnings of class \code{pllscore_warning}.
#'
#' @section Tables:
#' Every table is a data.frame whose column names need no backticks (\code{surprisal:tiny-gpt2}
#' becomes \code{surprisal_tiny_gpt2}; pllscore's own names, such as \code{tiny_gpt2_surprisal_bits}, already need none), converted column by column: numbers, integers, logicals and text
#' keep their type, and missing values are \code{NA}.
#'
#' @section Examples and tests:
#' The examples run on two small models (see \code{\link{pll_example_model}}) and do nothing where
#' they are not found. The tests (\code{R CMD check}, or \code{testthat::test_dir("tests/testthat")})
#' need the same models and a Python with pllscore; where either is missing each test is skipped with
#' the reason. Three environment variables make them run: \code{PLLSCORE_PYTHON} (a Python that has
#' pllscore), \code{PLLSCORE_SHARED} (the folder that holds \code{models/tiny-gpt2}, the \code{shared}
#' folder beside a checkout) and \code{PLLSCORE_R_REQUIRE=1} (a missing one is then a failure, not a
#' skip), as in \code{PLLSCORE_PYTHON=~/pllscore/.venv/bin/python PLLSCORE_SHARED=~/shared R CMD check
#' pllscore_0.1.0.tar.gz}.
#' @keywords internal
"_PACKAGE"
