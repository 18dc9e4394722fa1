# Reference for the crossed validity cell (tests/engine/test_crossed_df.py):
# lmerTest's Satterthwaite df and the variance-parametrization Satterthwaite df
# (expected REML information, Giesbrecht & Burns 1985; SAS PROC MIXED's
# DDFM=SATTERTHWAITE) of every pair of two replicates of
# tests/validity/few_units.simulate_crossed (8 models x 10 subjects x 3-5 prompts).
#
# Regenerate from the repository root:
#
#     python tests/reference/make_crossed_cell.py      # only if the design changes
#     Rscript tests/reference/crossed_cell.R
#
# Output: tests/reference/crossed_cell.json next to this script.  Needs R with
# lme4, lmerTest and jsonlite.  For each pair (model_a, model_b):
#   d = score_a - score_b on the cells (question, prompt), subject from the data;
#   m = lmerTest::lmer(d ~ 1 + (1|subject) + (1|prompt), REML = TRUE, bobyqa);
#   lmer_*: summary(m)$coefficients (GLS intercept, its SE, Satterthwaite df);
#   components: VarCorr(m) (subject, prompt, residual variances);
#   vp_* (written here with dense matrices, independently of mixrank):
#     Sigma = psi_s Z_s Z_s' + psi_p Z_p Z_p' + psi_e I at lme4's estimates,
#     P = Sigma^-1 - Sigma^-1 1 (1' Sigma^-1 1)^-1 1' Sigma^-1,
#     I_ij = tr(P S_i P S_j) / 2 with S = (Z_s Z_s', Z_p Z_p', I) (the expected
#     REML information of the variances psi),
#     cells: V = w' Sigma w with w = 1/n, gradient g_i = w' S_i w;
#     gls:   V = 1 / (1' Sigma^-1 1), gradient g_i = V^2 1' Sigma^-1 S_i Sigma^-1 1;
#     df = 2 V^2 / (g' I^-1 g).

suppressPackageStartupMessages({
  library(lme4)
  library(lmerTest)
  library(jsonlite)
})

args <- commandArgs(trailingOnly = FALSE)
file_arg <- sub("^--file=", "", args[grep("^--file=", args)])
ref_dir <- if (length(file_arg) == 1) dirname(normalizePath(file_arg)) else "tests/reference"

vp_df <- function(d, subject, prompt, psi) {
  n <- length(d)
  Zs <- model.matrix(~ 0 + factor(subject))
  Zp <- model.matrix(~ 0 + factor(prompt))
  S <- list(Zs %*% t(Zs), Zp %*% t(Zp), diag(n))
  Sigma <- psi[1] * S[[1]] + psi[2] * S[[2]] + psi[3] * S[[3]]
  Si <- solve(Sigma)
  one <- rep(1, n)
  a <- Si %*% one
  P <- Si - a %*% t(a) / sum(a)
  PS <- lapply(S, function(s) P %*% s)
  I <- outer(1:3, 1:3, Vectorize(function(i, j) sum(PS[[i]] * t(PS[[j]])) / 2))
  A <- solve(I)
  w <- one / n
  g_cells <- sapply(S, function(s) as.numeric(t(w) %*% s %*% w))
  V_cells <- sum(g_cells * psi)
  V_gls <- 1 / sum(a)
  g_gls <- sapply(S, function(s) V_gls^2 * as.numeric(t(a) %*% s %*% a))
  list(cells_estimate = mean(d), cells_variance = V_cells,
       cells_df = 2 * V_cells^2 / as.numeric(t(g_cells) %*% A %*% g_cells),
       gls_variance = V_gls,
       gls_df = 2 * V_gls^2 / as.numeric(t(g_gls) %*% A %*% g_gls))
}

cases <- list()
for (seed in c(1, 14)) {
  x <- read.csv(gzfile(file.path(ref_dir, "crossed_cell", sprintf("seed%d.csv.gz", seed))))
  models <- sort(unique(x$model))
  pairs <- list()
  for (pr in combn(models, 2, simplify = FALSE)) {
    xa <- x[x$model == pr[1], c("subject", "question", "prompt", "score")]
    xb <- x[x$model == pr[2], c("question", "prompt", "score")]
    m <- merge(xa, xb, by = c("question", "prompt"), suffixes = c("_a", "_b"))
    m$d <- m$score_a - m$score_b
    fit <- lmerTest::lmer(d ~ 1 + (1 | subject) + (1 | prompt), data = m, REML = TRUE,
                          control = lmerControl(optimizer = "bobyqa",
                                                optCtrl = list(rhoend = 1e-12, maxfun = 1e5)))
    co <- summary(fit)$coefficients
    vc <- as.data.frame(VarCorr(fit))
    psi <- c(vc$vcov[vc$grp == "subject"], vc$vcov[vc$grp == "prompt"],
             vc$vcov[vc$grp == "Residual"])
    pairs[[length(pairs) + 1]] <- c(
      list(model_a = pr[1], model_b = pr[2], n = nrow(m),
           lmer_estimate = co[1, "Estimate"], lmer_std_error = co[1, "Std. Error"],
           lmer_df = co[1, "df"], singular = isSingular(fit, tol = 1e-4),
           components = list(subject = psi[1], prompt = psi[2], residual = psi[3])),
      vp_df(m$d, m$subject, m$prompt, psi))
  }
  cases[[length(cases) + 1]] <- list(seed = seed, prompts = length(unique(x$prompt)),
                                     pairs = pairs)
}
out <- list(versions = list(R = as.character(getRversion()),
                            lme4 = as.character(packageVersion("lme4")),
                            lmerTest = as.character(packageVersion("lmerTest"))),
            cases = cases)
write(toJSON(out, auto_unbox = TRUE, digits = NA, pretty = TRUE),
      file.path(ref_dir, "crossed_cell.json"))
