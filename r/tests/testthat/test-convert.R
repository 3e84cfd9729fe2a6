test_that("a pandas frame becomes a data.frame column by column, with its types and NA", {
  need_pllscore()
  frame <- reticulate::py_run_string(paste(
    "import pandas as pd",
    "frame = pd.DataFrame({",
    "  'x:y-z': [1.5, float('nan'), -2.0],",
    "  'n': pd.Series([1, 2, 3], dtype='int64'),",
    "  'n_na': pd.Series([1, None, 3], dtype='Int64'),",
    "  'big': pd.Series([2**40, 1, 2], dtype='int64'),",
    "  'flag': [True, False, True],",
    "  'flag_na': pd.Series([True, None, False], dtype='boolean'),",
    "  'text': pd.Series(['a', None, 'é'], dtype='str'),",
    "  'obj': pd.Series(['a', None, 'NA'], dtype=object),",
    "  'cat': pd.Categorical(['b', 'a', None], categories=['b', 'a']),",
    "  'tokens': [['Ġa', 'b'], [], None],",
    "})",
    sep = "\n"
  ), local = TRUE, convert = FALSE)$frame
  d <- pllscore:::py_frame(frame)
  expect_s3_class(d, "data.frame")
  expect_equal(names(d), c("x_y_z", "n", "n_na", "big", "flag", "flag_na", "text", "obj", "cat", "tokens"))
  expect_identical(d$x_y_z, c(1.5, NA, -2.0))
  expect_identical(d$n, 1:3)
  expect_identical(d$n_na, c(1L, NA, 3L))
  expect_identical(d$big, c(2^40, 1, 2))
  expect_identical(d$flag, c(TRUE, FALSE, TRUE))
  expect_identical(d$flag_na, c(TRUE, NA, FALSE))
  expect_identical(d$text, c("a", NA, "\u00e9"))
  expect_identical(d$obj, c("a", NA, "NA"))
  expect_identical(d$cat, factor(c("b", "a", NA), levels = c("b", "a")))
  expect_identical(d$tokens, list(c("\u0120a", "b"), NULL, NULL))
})

test_that("an empty frame keeps its columns and types", {
  need_pllscore()
  frame <- reticulate::py_run_string(
    "import pandas as pd\nframe = pd.DataFrame({'a': pd.Series([], dtype='float64'), 'b': pd.Series([], dtype='str')})",
    local = TRUE, convert = FALSE
  )$frame
  d <- pllscore:::py_frame(frame)
  expect_identical(d$a, numeric(0))
  expect_identical(d$b, character(0))
})

test_that("a data.frame goes to pandas and back unchanged, NA included", {
  need_pllscore()
  d <- data.frame(
    num = c(1.25, NA, 3), int = c(1L, NA, 3L), lgl = c(NA, TRUE, FALSE), chr = c("NA", NA, "x y"),
    fct = factor(c("a", "b", NA)), stringsAsFactors = FALSE
  )
  frame <- pllscore:::r_frame(d)
  dtypes <- py_list(py_ref()$dtypes(frame))
  expect_equal(unlist(dtypes), c("float64", "Int64", "boolean", "object", "object"))
  back <- pllscore:::py_frame(frame)
  expect_identical(back$num, d$num)
  expect_identical(back$int, d$int)
  expect_identical(back$lgl, d$lgl)
  expect_identical(back$chr, d$chr)
  expect_identical(back$fct, c("a", "b", NA))
})

test_that("column names need no backticks", {
  expect_equal(
    pllscore:::r_names(c("surprisal:tiny-gpt2", "Overall_per-char", "included:meanItemRT", "1st", "a b", "x", "x")),
    c("surprisal_tiny_gpt2", "Overall_per_char", "included_meanItemRT", "x1st", "a_b", "x", "x_1")
  )
})
