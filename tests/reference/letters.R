# Reference letters for mixrank.inference.letters: R's multcompView::multcompLetters.
#
# Stored cases:  Rscript --vanilla tests/reference/letters.R
#   writes tests/reference/letters.json: seeded random symmetric p-value matrices
#   (3 to 10 models, several densities of small p-values; 12 to 30 models with
#   Bonferroni z tests of leaderboard-like score gaps) with the
#   letters multcompLetters(p, threshold = alpha) gives.
# Live cases:    Rscript --vanilla tests/reference/letters.R --live IN.json OUT.json
#   IN.json: {"cases": [{"models": [...], "p": [[...], ...], "alpha": 0.05}, ...]};
#   OUT.json: the same cases with "letters" (one string per model, in model order).
# multcompView 0.1-8 (Debian r-cran-multcompview), jsonlite.
suppressMessages({library(multcompView); library(jsonlite)})

letters_of <- function(models, p, alpha) {
  m <- matrix(unlist(p), nrow = length(models), byrow = TRUE,
              dimnames = list(models, models))
  out <- multcompLetters(m, compare = "<", threshold = alpha)$Letters
  unname(out[models])
}

args <- commandArgs(trailingOnly = TRUE)
if (length(args) >= 1 && args[1] == "--live") {
  inp <- fromJSON(args[2], simplifyVector = FALSE)
  cases <- lapply(inp$cases, function(cs) {
    cs$letters <- letters_of(unlist(cs$models), cs$p, cs$alpha)
    cs
  })
  write(toJSON(list(cases = cases), auto_unbox = TRUE, digits = NA), args[3])
} else {
  set.seed(20261206)
  cases <- list()
  add <- function(p, n) {
    p <- matrix(p, n, n)
    models <- sprintf("m%02d", seq_len(n))
    diag(p) <- 1
    pl <- lapply(seq_len(n), function(i) p[i, ])
    cases[[length(cases) + 1]] <<- list(models = models, p = pl, alpha = 0.05,
                                        letters = letters_of(models, pl, 0.05))
  }
  # unstructured: each pair's p-value below 0.05 with probability dens
  for (n in c(3, 4, 5, 6, 7, 8, 10)) {
    for (dens in c(0.1, 0.3, 0.5, 0.8, 0.95)) {
      p <- matrix(1, n, n)
      lo <- lower.tri(p)
      small <- runif(sum(lo)) < dens
      p[lo] <- ifelse(small, runif(sum(lo), 0, 0.05), runif(sum(lo), 0.05, 1))
      add(pmin(p, t(p)), n)
    }
  }
  # leaderboard-like: z tests of score gaps (scores spread over 0 to spread, common SE),
  # in a shuffled model order
  for (n in c(12, 15, 20, 25, 30)) {
    for (spread in c(4, 8, 16)) {
      x <- sample(runif(n, 0, spread))
      se <- runif(n, 0.5, 1.5)
      z <- abs(outer(x, x, "-")) / sqrt(outer(se^2, se^2, "+"))
      add(pmin(1, 2 * pnorm(-z) * n * (n - 1) / 2), n)
    }
  }
  here <- dirname(sub("--file=", "", grep("--file=", commandArgs(FALSE), value = TRUE)))
  write(toJSON(list(source = paste("multcompView", packageVersion("multcompView"),
                                   "multcompLetters(p, threshold = alpha)"),
                    cases = cases), auto_unbox = TRUE, digits = NA),
        file.path(here, "letters.json"))
}
