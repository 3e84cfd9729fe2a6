test_that("pll_python names the Python and pllscore's version", {
  need_pllscore()
  info <- pll_python()
  expect_s3_class(info, "pll_python")
  expect_true(file.exists(info$python))
  expect_equal(info$pllscore, reticulate::py_to_r(pllscore_py()$`__version__`))
  expect_match(info$python_version, "^3\\.")
  expect_true(nzchar(info$source))
  expect_output(print(info), "pllscore")
})

test_that("a PLLSCORE_PYTHON that does not exist is one clear error", {
  withr_env <- Sys.getenv("PLLSCORE_PYTHON", unset = NA)
  Sys.setenv(PLLSCORE_PYTHON = file.path(tempdir(), "no-such-python"))
  on.exit(if (is.na(withr_env)) Sys.unsetenv("PLLSCORE_PYTHON") else Sys.setenv(PLLSCORE_PYTHON = withr_env))
  expect_error(pllscore:::find_python(), "PLLSCORE_PYTHON is .*no-such-python, which does not exist", class = "pllscore_error")
})

test_that("a .venv in a folder above the working directory is found", {
  root <- file.path(tempdir(), "checkout")
  dir.create(file.path(root, ".venv", "bin"), recursive = TRUE, showWarnings = FALSE)
  dir.create(file.path(root, "r", "tests"), recursive = TRUE, showWarnings = FALSE)
  file.create(file.path(root, ".venv", "bin", "python"))
  old <- setwd(file.path(root, "r", "tests"))
  env <- Sys.getenv("PLLSCORE_PYTHON", unset = NA)
  Sys.unsetenv("PLLSCORE_PYTHON")
  on.exit({
    setwd(old)
    if (!is.na(env)) Sys.setenv(PLLSCORE_PYTHON = env)
    unlink(root, recursive = TRUE)
  })
  found <- pllscore:::find_python()
  expect_equal(normalizePath(found$path), normalizePath(file.path(root, ".venv", "bin", "python")))
  expect_match(found$source, "^\\.venv in ")
})

test_that("a Python without pllscore is one R error naming the fix", {
  need_pllscore()
  venv <- file.path(tempdir(), "venv-without-pllscore")  # a fresh venv: the base Python's packages only
  made <- system2(reticulate::py_exe(), c("-m", "venv", "--without-pip", shQuote(venv)), stdout = TRUE, stderr = TRUE)
  on.exit(unlink(venv, recursive = TRUE))
  python <- pllscore:::venv_python(venv)
  skip_if(is.null(python), paste(made, collapse = " "))
  rscript <- file.path(R.home("bin"), "Rscript")
  out <- suppressWarnings(system2(
    rscript, c("-e", shQuote("pllscore::pll_python()")), stdout = TRUE, stderr = TRUE,
    env = c(paste0("PLLSCORE_PYTHON=", python), paste0("R_LIBS=", paste(.libPaths(), collapse = ":")))
  ))
  error <- grep("^Error", out, value = TRUE)
  expect_length(error, 1)
  expect_match(error, "pllscore is not installed in the Python R uses .*pip install pllscore.*PLLSCORE_PYTHON")
  expect_false(any(grepl("Traceback", out)))
})

test_that("PLLSCORE_PYTHON is kept as given, its link not resolved (a venv's python is a link)", {
  target <- file.path(tempdir(), "base-python")
  file.create(target)
  link <- file.path(tempdir(), "venv-python")
  skip_if_not(file.symlink(target, link), "no symbolic links here")
  env <- Sys.getenv("PLLSCORE_PYTHON", unset = NA)
  Sys.setenv(PLLSCORE_PYTHON = link)
  on.exit({
    if (is.na(env)) Sys.unsetenv("PLLSCORE_PYTHON") else Sys.setenv(PLLSCORE_PYTHON = env)
    unlink(c(link, target))
  })
  expect_equal(pllscore:::find_python()$path, link)
})
