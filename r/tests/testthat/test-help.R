# The help pages: examples that run (on the small models), text in R's terms.

help_pages <- function() tools::Rd_db("pllscore")

example_code <- function(rd) {
  file <- tempfile(fileext = ".R")
  on.exit(unlink(file))
  tools::Rd2ex(rd, file)
  if (file.exists(file)) readLines(file) else character()
}

test_that("every function's help page has an example that runs, none behind \\dontrun but pll_install's download", {
  need_pllscore()
  pages <- help_pages()
  for (name in setdiff(names(pages), "pllscore-package.Rd")) {
    code <- example_code(pages[[name]])
    expect_true(length(code) > 0, label = paste(name, "has examples"))
    if (name != "pll_install.Rd") expect_false(any(grepl("## Not run", code)), label = paste(name, "runs all"))
  }
  for (name in names(pages)) {
    code <- example_code(pages[[name]])
    if (!length(code)) next
    said <- character()
    withCallingHandlers(
      utils::capture.output(suppressWarnings(eval(parse(text = code), envir = new.env()))),
      message = function(m) {
        said <<- c(said, conditionMessage(m))
        invokeRestart("muffleMessage")
      }
    )
    expect_false(any(grepl("^pll_example_model: ", said)), label = paste(name, "found the models"))
  }
})

test_that("the help pages speak R, not pllscore's Python API", {
  pages <- help_pages()
  for (name in names(pages)) {
    text <- paste(utils::capture.output(tools::Rd2txt(pages[[name]], options = list(underline_titles = FALSE))),
                  collapse = "\n")
    expect_false(grepl("Scorer[.]|pllscore[.](load|eval|to_frame|reading_times)|run_blimp|run_pairs|by their Python names",
                       text), label = name)
  }
})
