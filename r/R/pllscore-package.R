#' pllscore: language-model scores from R
#'
#' Every number comes from the pllscore Python package, through reticulate; nothing is scored in R.
#'
#' @section Which Python:
#' The first call decides, once per R session: the Python named by the environment variable
#' \code{PLLSCORE_PYTHON}; else the virtual environment named by \code{options(pllscore.venv = )};
#' else a \code{.venv} in the working directory or the nearest folder above it that has one (a pllscore
#' checkout's); else reticulate's own choice. \code{\link{pll_python}} says which one runs and the
#' version of pllscore it has.
#'
#' @section Errors:
#' An error of pllscore (bad input, a model that cannot be loaded) is an R error of class
#' \code{pllscore_error} carrying pllscore's one-line message; its \code{type} is the Python error's
#' (\code{InputError}, \code{ModelError}, ...).
#'
#' @section Tables:
#' Every table is a data.frame whose column names need no backticks (\code{surprisal:tiny-gpt2}
#' becomes \code{surprisal_tiny_gpt2}; pllscore's own names, such as \code{tiny_gpt2_surprisal_bits}, already need none), converted column by column: numbers, integers, logicals and text
#' keep their type, and missing values are \code{NA}.
#' @keywords internal
"_PACKAGE"
