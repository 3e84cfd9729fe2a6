# Across processes and sessions: R's numbers against a Python process of its own, and what a session's first call
# starts.

rscript <- function(code, env = character()) {
  out <- suppressWarnings(system2(
    file.path(R.home("bin"), "Rscript"), c("-e", shQuote(code)), stdout = TRUE, stderr = TRUE,
    env = c(paste0("R_LIBS=", paste(.libPaths(), collapse = ":")), env)
  ))
  paste(out, collapse = "\n")
}

test_that("R's scores equal a separate Python process's (torch's own BLAS, not the one R loaded)", {
  need_pllscore()
  brown <- utils::read.csv(shared_path("data", "brown", "brown_stimuli.csv"), stringsAsFactors = FALSE)
  texts <- brown$sentence[1:12]
  file <- tempfile(fileext = ".txt")
  on.exit(unlink(file))
  writeLines(texts, file, useBytes = TRUE)
  folders <- c(shared_path("models", "tiny-bert-cased"), shared_path("models", "tiny-gpt2"))
  # as from a shell: without the library path R sets (where it may find another build of libpython first), and
  # without a preloaded BLAS (how the checks put OpenBLAS in R's place)
  out <- system2(reticulate::py_exe(), c(shQuote(normalizePath("separate_process.py")), shQuote(file), shQuote(folders)),
                 stdout = TRUE, env = c("LD_LIBRARY_PATH=", "LD_PRELOAD="))
  expect_length(out, 2 * length(texts))
  python <- as.numeric(sub(".*\t", "", out))
  r <- c(pll_score(texts, tiny_bert())$logprob, pll_score(texts, tiny_gpt2())$logprob)
  # the reference BLAS (Debian's R) or OpenBLAS in R's place moves these by 1e-7 to 1e-5
  expect_lt(max(abs(r - python)), 1e-9)
})

test_that("every function, as a session's first call, starts the Python pll_model() would", {
  # a Python that does not exist: each call must stop at find_python() with its error, not start another Python
  code <- paste(
    "library(pllscore)",
    "d <- data.frame(good = 'a', bad = 'b')",
    "calls <- list(",
    "  quote(pll_python()), quote(pll_model('m')), quote(pll_score('a', 'm')), quote(pll_words('a', 1, 'm')),",
    "  quote(pll_predict('The ___.', 'm')), quote(pll_blimp('blimp', 'm')), quote(pll_pairs(d, 'm', 'good', 'bad')),",
    "  quote(pll_reading_times(d, 'm')))",
    "for (call in calls) {",
    "  msg <- tryCatch({eval(call); 'no error'}, error = function(e) paste(class(e)[1], conditionMessage(e)))",
    "  cat(deparse(call), '->', msg, '\\n')",
    "}",
    "cat('python started:', reticulate::py_available(), '\\n')",
    sep = "\n"
  )
  out <- rscript(code, paste0("PLLSCORE_PYTHON=", file.path(tempdir(), "no-such-python")))
  lines <- grep(" -> ", strsplit(out, "\n")[[1]], value = TRUE)
  expect_length(lines, 8)
  expect_true(all(grepl("-> pllscore_error PLLSCORE_PYTHON is .*no-such-python, which does not exist", lines)), out)
  expect_match(out, "python started: FALSE")
})

test_that("torch imported into R's Python before pllscore is a warning that says what to do", {
  need_pllscore()
  code <- paste(
    sprintf("reticulate::use_python('%s', required = TRUE)", reticulate::py_exe()),
    "invisible(reticulate::import('torch'))",
    "w <- tryCatch({pllscore::pll_python(); 'no warning'}, warning = function(w) paste(class(w)[1], conditionMessage(w)))",
    "cat('->', w, '\\n')",
    sep = "\n"
  )
  out <- rscript(code, "PLLSCORE_PYTHON=")
  expect_match(out, "-> pllscore_warning torch was imported in this R session's Python before pllscore.*restart R", all = FALSE)
})
