# Reference values for mixrank.change.eb.fit_normal_normal (the REML fit of
# the normal-normal model over items used by reliable_change(method = "eb")).
#
# Regenerate (from the repository root; needs base R, nlme and jsonlite):
#
#     Rscript tests/reference/rci_eb_nlme.R
#
# It writes tests/reference/rci_eb_nlme.json next to this script; the test
# tests/change/test_eb.py reads that JSON and needs no R.  Every input is
# generated below with a fixed seed and copied into the JSON.
#
# Model: delta_i = mu + u_i + e_i, u_i ~ N(0, tau2), e_i ~ N(0, s2_i) with s2_i
# known.  nlme fits it as a random intercept per item with one observation per
# item, the residual variance fixed to s2_i by varFixed(~ s2) and sigma = 1:
#     lme(delta ~ 1, random = ~ 1 | item, weights = varFixed(~ s2),
#         control = lmeControl(sigma = 1), method = "ML")
# Reported ("ml"): tau2 (VarCorr), mu (fixef), the BLUPs mu + ranef and the ML
# log-likelihood.
#
# REML: nlme's REML with a fixed sigma does not maximise the usual restricted
# likelihood (a known discrepancy: Pustejovsky 2016, "Bug in nlme::lme with
# fixed sigma and REML estimation"; Viechtbauer on R-sig-mixed-models,
# 2016-06-28; its ML agrees with metafor).  The "reml" entries therefore come
# from R's optimize() on the textbook criterion (Harville 1977)
#     -2 l_R = sum log(tau2 + s2) + log sum w + sum w (delta - mu_hat)^2,
# w = 1 / (tau2 + s2), and the BLUPs mu_hat + tau2 / (tau2 + s2) (delta - mu_hat).
# nlme's REML value is kept as "nlme_reml_tau2" for the record only.
# Produced with R 4.2.2 (Debian r-base), nlme 3.1-162.

suppressPackageStartupMessages({library(nlme); library(jsonlite)})

args <- commandArgs(trailingOnly = FALSE)
file_arg <- sub("^--file=", "", args[grep("^--file=", args)])
out_dir <- if (length(file_arg) == 1) dirname(normalizePath(file_arg)) else "tests/reference"
out_path <- file.path(out_dir, "rci_eb_nlme.json")

nlme_fit <- function(delta, s2, method) {
  d <- data.frame(delta = delta, s2 = s2, item = factor(seq_along(delta)))
  lme(delta ~ 1, random = ~ 1 | item, weights = varFixed(~ s2),
      control = lmeControl(sigma = 1, msMaxIter = 500, msTol = 1e-12, tolerance = 1e-12,
                           niterEM = 100),
      data = d, method = method)
}

textbook_reml <- function(delta, s2) {
  obj <- function(t) {
    v <- t + s2; w <- 1 / v; mu <- sum(w * delta) / sum(w)
    sum(log(v)) + log(sum(w)) + sum(w * (delta - mu)^2)
  }
  upper <- 10 * (var(delta) + max(s2))
  o <- optimize(obj, c(0, upper), tol = 1e-14)
  t <- if (obj(0) <= o$objective) 0 else o$minimum
  w <- 1 / (t + s2); mu <- sum(w * delta) / sum(w)
  list(tau2 = t, mu = mu, blup = mu + t / (t + s2) * (delta - mu))
}

fit_one <- function(delta, s2) {
  m <- nlme_fit(delta, s2, "ML")
  mu <- unname(fixef(m)[1])
  ml <- list(tau2 = as.numeric(VarCorr(m)[1, "Variance"]), mu = mu, blup = mu + ranef(m)[, 1],
             loglik = as.numeric(logLik(m)))
  m_reml <- nlme_fit(delta, s2, "REML")
  list(delta = delta, s2 = s2, ml = ml, reml = textbook_reml(delta, s2),
       nlme_reml_tau2 = as.numeric(VarCorr(m_reml)[1, "Variance"]))
}

set.seed(20240817)
cases <- list()
# 1. heteroscedastic sampling variances, clear between-item spread
n <- 40
s2 <- runif(n, 0.005, 0.08)
cases$hetero <- fit_one(rnorm(n, 0.05, sqrt(0.03 + s2)), s2)
# 2. binomial-like: K = 10 samples per version, pooled variances pbar (1 - pbar) (2 / K)
K <- 10
pb <- rbeta(60, 2, 2)
pa <- pmin(pmax(pb + rnorm(60, 0, 0.15), 0.02), 0.98)
xb <- rbinom(60, K, pb); xa <- rbinom(60, K, pa)
pbar <- (xb + xa) / (2 * K)
keep <- pbar > 0 & pbar < 1
cases$binomial <- fit_one(((xa - xb) / K)[keep], (pbar * (1 - pbar) * 2 / K)[keep])
# 3. small spread relative to the noise (tau2 small but positive)
n <- 30
s2 <- runif(n, 0.02, 0.05)
cases$small_tau <- fit_one(rnorm(n, -0.02, sqrt(0.004 + s2)), s2)

out <- list(
  generated_by = "tests/reference/rci_eb_nlme.R",
  r_version = R.version.string,
  nlme_version = as.character(packageVersion("nlme")),
  cases = cases
)
writeLines(toJSON(out, digits = NA, auto_unbox = TRUE, pretty = TRUE), out_path)
cat("wrote", out_path, "\n")
