# Reference fits of the binomial GLMM with a model x covariate fixed part
# (glmer's literal reading of "model * x"), for mixrank's family="binomial"
# by= accessors (tests/engine/test_glmm_by_reference.py).
#
# Regenerate from the repository root:
#
#     python tests/reference/make_glmm_by_cases.py   # only if the designs change
#     Rscript tests/reference/glmer_by.R [CASE_DIR OUT_PATH]
#
# Output: tests/reference/glmer_by.json next to this script.  Needs R with
# lme4 and jsonlite; versions are recorded in the JSON.
#
# Each case of glmm_by_cases/cases.json is fitted with the formula as written,
# family = binomial, nAGQ = 1 and 0, with the tight control of glmer.R
# (bobyqa, tolPwrss = 1e-12, rhoend = 1e-10).  Recorded per fit:
#   * fixef, vcov (lme4's default: finite-difference Hessian for nAGQ = 1),
#     theta, deviance;
#   * per level l of the covariate and pair (a, b) of models:
#       - logit: (x_al - x_bl)' beta and its SE sqrt(L' V L), where x_jl is the
#         fixed-effect model-matrix row of model j at level l (treatment coding,
#         built by model.matrix on the reference grid);
#       - response (average marginal effect, computed here by the delta method):
#         mean over the cells c at level l of plogis(x_al' beta + s_c) -
#         plogis(x_bl' beta + s_c), where s_c sums the conditional modes (ranef)
#         of the random terms without "model" at cell c (model-by-unit terms at
#         0); gradient mean_c p_a (1 - p_a) x_al - mean_c p_b (1 - p_b) x_bl,
#         SE sqrt(g' V g);
#   * per pair: the Wald chi-square of "the gap is the same at every level":
#     rows (x_al - x_bl) - (x_a1 - x_b1) for l > 1, chi2 = (L b)' (L V L')^-1 (L b).

suppressPackageStartupMessages({
  library(lme4)
  library(jsonlite)
})

args <- commandArgs(trailingOnly = FALSE)
file_arg <- sub("^--file=", "", args[grep("^--file=", args)])
ref_dir <- if (length(file_arg) == 1) dirname(normalizePath(file_arg)) else "tests/reference"
targs <- commandArgs(trailingOnly = TRUE)
# optional: CASE_DIR OUT_PATH (the live test, tests/engine/test_glmm_by_reference.py)
case_dir <- if (length(targs) >= 1) targs[1] else file.path(ref_dir, "glmm_by_cases")
out_path <- if (length(targs) >= 2) targs[2] else file.path(ref_dir, "glmer_by.json")

tight <- glmerControl(optimizer = "bobyqa", tolPwrss = 1e-12,
                      optCtrl = list(rhoend = 1e-10, maxfun = 1e5))

cases <- fromJSON(file.path(case_dir, "cases.json"), simplifyVector = FALSE)

one_case <- function(name, spec) {
  cat(name, "\n")
  df <- read.csv(gzfile(file.path(case_dir, paste0(name, ".csv.gz"))), stringsAsFactors = FALSE)
  by <- spec$by
  items <- unlist(spec$items)
  df$model <- factor(df$model, levels = sort(unique(df$model)))
  df[[by]] <- factor(df[[by]], levels = sort(unique(df[[by]])))
  models <- levels(df$model)
  lv <- levels(df[[by]])
  # the cells: every combination of the item keys present in the data, with its level
  key <- do.call(paste, c(df[items], sep = ":"))
  cells <- df[!duplicated(key), c(items, by)]
  cells$key <- key[!duplicated(key)]
  out <- list(formula = spec$formula, by = by, models = models, levels = lv)
  for (nagq in c(1, 0)) {
    m <- glmer(as.formula(spec$formula), data = df, family = binomial, nAGQ = nagq,
               control = tight)
    b <- fixef(m)
    V <- as.matrix(vcov(m))
    # shared (model-free) random effects at each cell
    s <- rep(0, nrow(cells))
    re <- ranef(m)
    for (g in names(re)) {
      if (grepl("model", g)) next
      parts <- strsplit(g, ":")[[1]]
      k <- do.call(paste, c(cells[parts], sep = ":"))
      s <- s + re[[g]][k, "(Intercept)"]
    }
    grid <- expand.grid(model = factor(models, levels = models), x = factor(lv, levels = lv))
    names(grid)[2] <- by
    tt <- delete.response(terms(m, fixed.only = TRUE))
    Xg <- model.matrix(tt, grid, contrasts.arg = attr(getME(m, "X"), "contrasts"))
    row_of <- function(j, l) Xg[which(grid$model == j & grid[[by]] == l), ]
    con <- list()
    wald <- list()
    for (ia in seq_along(models)) for (ib in seq_along(models)) {
      if (ib <= ia) next
      a <- models[ia]; bm <- models[ib]
      L0 <- row_of(a, lv[1]) - row_of(bm, lv[1])
      Lw <- NULL
      for (l in lv) {
        xa <- row_of(a, l); xb <- row_of(bm, l)
        L <- xa - xb
        at <- cells[[by]] == l
        pa <- plogis(sum(xa * b) + s[at]); pb <- plogis(sum(xb * b) + s[at])
        g <- mean(pa * (1 - pa)) * xa - mean(pb * (1 - pb)) * xb
        con[[length(con) + 1]] <- list(
          model_a = a, model_b = bm, level = l,
          logit = sum(L * b), logit_se = sqrt(drop(t(L) %*% V %*% L)),
          ame = mean(pa - pb), ame_se = sqrt(drop(t(g) %*% V %*% g)))
        if (l != lv[1]) Lw <- rbind(Lw, L - L0)
      }
      d <- drop(Lw %*% b)
      chi <- drop(t(d) %*% solve(Lw %*% V %*% t(Lw), d))
      wald[[length(wald) + 1]] <- list(model_a = a, model_b = bm, chisq = chi, df = nrow(Lw))
    }
    out[[paste0("nagq", nagq)]] <- list(
      fixef = as.list(b), vcov = V, theta = as.list(getME(m, "theta")),
      deviance = -2 * as.numeric(logLik(m)), contrasts = con, wald = wald)
  }
  out
}

res <- list()
for (name in names(cases)) res[[name]] <- one_case(name, cases[[name]])
res$versions <- list(R = R.version.string, lme4 = as.character(packageVersion("lme4")))
writeLines(toJSON(res, auto_unbox = TRUE, digits = NA, pretty = TRUE), out_path)
cat("wrote", out_path, "\n")
