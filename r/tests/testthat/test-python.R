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
  # in a folder holding a folder pllscore (R CMD check's holds the installed R package), which Python would
  # import as a namespace package
  dir.create(file.path(venv, "work", "pllscore"), recursive = TRUE)
  code <- sprintf("setwd('%s'); pllscore::pll_python()", file.path(venv, "work"))
  out <- suppressWarnings(system2(
    rscript, c("-e", shQuote(code)), stdout = TRUE, stderr = TRUE,
    env = c(paste0("PLLSCORE_PYTHON=", python), paste0("R_LIBS=", paste(.libPaths(), collapse = ":")))
  ))
  error <- grep("^Error", out, value = TRUE)
  expect_length(error, 1)
  expect_match(error, "pllscore is not installed in the Python R uses .*run pll_install\\(.*make r.*PLLSCORE_PYTHON")
  expect_false(grepl("pip install pllscore", error, fixed = TRUE))  # not on the Python Package Index
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

test_that("pll_install makes an environment that a new session then finds", {
  need_pllscore()
  # a stand-in for pllscore's wheel (its own is a build and a download away): pip installs it offline
  dir <- file.path(tempdir(), "pll-install")
  dir.create(dir, showWarnings = FALSE)
  on.exit(unlink(dir, recursive = TRUE))
  wheel <- file.path(dir, "pllscore-0.0.1-py3-none-any.whl")
  make <- paste(
    "import sys, zipfile",
    "files = {'pllscore/__init__.py': '__version__ = \"0.0.1\"\\n',",
    "  'pllscore-0.0.1.dist-info/METADATA': 'Metadata-Version: 2.1\\nName: pllscore\\nVersion: 0.0.1\\n',",
    "  'pllscore-0.0.1.dist-info/WHEEL': 'Wheel-Version: 1.0\\nGenerator: test\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n'}",
    "files['pllscore-0.0.1.dist-info/RECORD'] = ''.join(name + ',,\\n' for name in [*files, 'pllscore-0.0.1.dist-info/RECORD'])",
    "with zipfile.ZipFile(sys.argv[1], 'w') as z: [z.writestr(n, t) for n, t in files.items()]",
    sep = "\n"
  )
  system2(reticulate::py_exe(), c("-c", shQuote(make), shQuote(wheel)))
  env <- file.path(dir, "venv")
  python <- suppressMessages(pll_install(wheel, envname = env, python = reticulate::py_exe(),
                                          pip_args = c("--no-index", "--no-deps", "--quiet")))
  expect_equal(python, pllscore:::venv_python(env))
  code <- sprintf("setwd(tempdir()); options(pllscore.install_dir = '%s'); print(pllscore::pll_python())", env)
  out <- suppressWarnings(system2(
    file.path(R.home("bin"), "Rscript"), c("-e", shQuote(code)), stdout = TRUE, stderr = TRUE,
    env = c(paste0("R_LIBS=", paste(.libPaths(), collapse = ":")), "PLLSCORE_PYTHON=", "RETICULATE_PYTHON=")
  ))
  out <- paste(out, collapse = "\n")
  expect_match(out, "pllscore 0.0.1 on Python 3")
  expect_match(out, "pll_install\\(\\)'s environment")
})

test_that("pll_install outside a checkout asks for one (pllscore is not on the Python Package Index)", {
  old <- setwd(tempdir())
  on.exit(setwd(old))
  expect_error(pll_install(), "no pllscore checkout holds the working directory; give source = ", class = "pllscore_error")
})
