library(testthat)
library(pllscore)

test_check("pllscore")
