# Reference fits of the binomial GLMM "model * x" with a NUMERIC covariate x
# (glmer's literal reading: treatment-coded model, x, model:x), for mixrank's
# family="binomial" slope fits (tests/engine/test_glmm_slope_reference.py).
#
# Regenerate from the repository root:
#
#     python tests/reference/make_glmm_slope_cases.py   # only if the designs change
#     Rscript tests/reference/glmer_slope.R
#
# Output: tests/reference/glmer_slope.json next to this script (lme4 and
# jsonlite versions recorded).  Each case of glmm_slope_cases/cases.json is
# fitted as written, family = binomial, nAGQ = 1 and 0, with the tight
# control of glmer.R (bobyqa, tolPwrss = 1e-12, rhoend = 1e-10).  Recorded
# per fit: fixef, vcov (lme4's default), theta, deviance, logLik, and
#   * at x0 in (mean of x over the cells, its quartiles over the cells; type 7)
#     and every pair (a, b) of models:
#       - logit: (x_a - x_b)' beta at x0 and its SE sqrt(L' V L), where x_j is
#         the fixed-effect model-matrix row of model j at x = x0 (model.matrix
#         on the reference grid);
#       - response (average marginal effect at x0, delta method): mean over
#         the cells c of plogis(x_a' beta + s_c) - plogis(x_b' beta + s_c), s_c
#         the sum of the conditional modes (ranef) of the random terms without
#         "model" at cell c; gradient mean_c p_a (1 - p_a) x_a - mean_c
#         p_b (1 - p_b) x_b, SE sqrt(g' V g);
#   * per pair: Wald chi-square of equal slopes, (b_a - b_b)^2 / var.

suppressPackageStartupMessages({
  library(lme4)
  library(jsonlite)
})

args <- commandArgs(trailingOnly = FALSE)
file_arg <- sub("^--file=", "", args[grep("^--file=", args)])
ref_dir <- if (length(file_arg) == 1) dirname(normalizePath(file_arg)) else "tests/reference"
case_dir <- file.path(ref_dir, "glmm_slope_cases")
out_path <- file.path(ref_dir, "glmer_slope.json")

tight <- glmerControl(optimizer = "bobyqa", tolPwrss = 1e-12,
                      optCtrl = list(rhoend = 1e-10, maxfun = 1e5))
cases <- fromJSON(file.path(case_dir, "cases.json"), simplifyVector = FALSE)

out <- list(versions = list(R = R.version.string,
                            lme4 = as.character(packageVersion("lme4")),
                            jsonlite = as.character(packageVersion("jsonlite"))))
for (name in names(cases)) {
  spec <- cases[[name]]
  df <- read.csv(gzfile(file.path(case_dir, paste0(name, ".csv.gz"))), stringsAsFactors = FALSE)
  df$model <- factor(df$model, levels = sort(unique(df$model)))
  res <- list(formula = spec$formula, by = spec$by)
  for (nagq in c(1, 0)) {
    m <- glmer(as.formula(spec$formula), data = df, family = binomial, nAGQ = nagq,
               control = tight)
    b <- fixef(m)
    V <- as.matrix(vcov(m))
    items <- unlist(spec$items)
    key <- do.call(paste, c(df[items], sep = ":"))
    cells <- df[!duplicated(key), c(items, spec$by)]
    s <- rep(0, nrow(cells))
    re <- ranef(m)
    for (g in names(re)) {
      if (grepl("model", g)) next
      k <- do.call(paste, c(cells[strsplit(g, ":")[[1]]], sep = ":"))
      s <- s + re[[g]][k, "(Intercept)"]
    }
    xc <- cells[[spec$by]]
    at <- c(mean(xc), unname(quantile(xc, c(0.25, 0.5, 0.75))))
    models <- levels(df$model)
    tt <- delete.response(terms(m, fixed.only = TRUE))
    con <- list()
    for (x0 in at) {
      grid <- data.frame(model = factor(models, levels = models))
      grid[[spec$by]] <- x0
      Xg <- model.matrix(tt, grid, contrasts.arg = attr(getME(m, "X"), "contrasts"))
      for (i in seq_along(models)) for (j in seq_along(models)) {
        if (j <= i) next
        L <- Xg[i, ] - Xg[j, ]
        pa <- plogis(sum(Xg[i, ] * b) + s)
        pb <- plogis(sum(Xg[j, ] * b) + s)
        gr <- mean(pa * (1 - pa)) * Xg[i, ] - mean(pb * (1 - pb)) * Xg[j, ]
        con[[length(con) + 1]] <- list(
          model_a = models[i], model_b = models[j], x = x0,
          logit = sum(L * b), logit_se = sqrt(drop(t(L) %*% V %*% L)),
          ame = mean(pa - pb), ame_se = sqrt(drop(t(gr) %*% V %*% gr)))
      }
    }
    wald <- list()
    sl <- paste0("model", models[-1], ":", spec$by)
    for (i in seq_along(models)) for (j in seq_along(models)) {
      if (j <= i) next
      L <- setNames(rep(0, length(b)), names(b))
      if (i > 1) L[sl[i - 1]] <- 1
      if (j > 1) L[sl[j - 1]] <- -1
      wald[[length(wald) + 1]] <- list(model_a = models[i], model_b = models[j],
                                       chisq = sum(L * b)^2 / drop(t(L) %*% V %*% L))
    }
    res[[paste0("nagq", nagq)]] <- list(
      fixef = as.list(b), vcov = unname(V),
      theta = unname(getME(m, "theta")), deviance = deviance(m),
      loglik = as.numeric(logLik(m)), at = at, contrasts = con, wald = wald)
  }
  out[[name]] <- res
}
writeLines(toJSON(out, digits = NA, auto_unbox = TRUE, pretty = TRUE), out_path)
