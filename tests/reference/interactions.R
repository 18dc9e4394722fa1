# Reference fits of model x covariate formulas by lme4 + lmerTest, for
# mixrank's p-column engine (tests/engine/test_interactions_reference.py).
#
# Regenerate from the repository root:
#
#     python tests/reference/make_interaction_cases.py   # only if the designs change
#     Rscript tests/reference/interactions.R [DATA_DIR]
#
# DATA_DIR: the real-data folder (default $MIXRANK_DATA_DIR, else the datasets
# bundled in mixrank/datasets/ of this repository).  Output: interactions.json here.
# Produced with R 4.2.2, lme4 1.1-31, lmerTest 3.1-3 (recorded in the JSON).
#
# For every case and pair (model_a, model_b), the paired differences are built
# as mixrank builds them (d = y_a - y_b over the common cells, cells keyed by
# subject, question, prompt) and each covariate is taken per cell.  Then, with
# the fixed part of the interaction written for d (model * (x + z) -> 1 + x + z),
#   m <- lmerTest::lmer(d ~ 1 + x + z + (1|g) ..., REML = TRUE, bobyqa, rhoend 1e-12)
# and the JSON records REMLcrit, the variance components, summary(m)
# coefficients (estimate, SE, Satterthwaite df), anova(m, type = 3) (F, NumDF,
# DenDF) and, per `by` covariate, contest(m, L, joint = FALSE) for the
# emmeans-style reference grid: for each level of a categorical `by` the
# model-matrix rows of every combination of the other categorical covariates
# (all levels, equal weights) with numeric covariates at their mean over the
# pair's cells, averaged; for a numeric `by`, the difference of that average at
# mean + 1 and at the mean (the slope).  A level whose L is not estimable from
# the pair's cells (not in the row space of its X) is recorded as missing.
# Levels are sorted in C-locale (byte) order, as mixrank sorts them (so the
# reference level of the treatment coding is the same).
# For each model alone, y ~ 1 + x + (1|g) ... on its own cell scores and the
# same reference grids give the per-level scores (`models`).
# For a single categorical covariate, lmer(d ~ 0 + x + ...) gives the same
# per-level gaps directly; they are recorded as `direct`.

suppressPackageStartupMessages({
  library(lme4)
  library(lmerTest)
  library(jsonlite)
})

args <- commandArgs(trailingOnly = FALSE)
file_arg <- sub("^--file=", "", args[grep("^--file=", args)])
ref_dir <- if (length(file_arg) == 1) dirname(normalizePath(file_arg)) else "tests/reference"
repo_root <- normalizePath(file.path(ref_dir, "..", ".."))
targs <- commandArgs(trailingOnly = TRUE)
data_dir <- if (length(targs) >= 1) targs[1] else if (nzchar(Sys.getenv("MIXRANK_DATA_DIR"))) {
  Sys.getenv("MIXRANK_DATA_DIR") } else file.path(repo_root, "mixrank", "datasets")
# live checks (tests/engine/test_interactions_live.py) point these elsewhere
out_path <- Sys.getenv("MIXRANK_INTERACTION_OUT", file.path(ref_dir, "interactions.json"))
case_dir <- Sys.getenv("MIXRANK_INTERACTION_CASES", file.path(ref_dir, "interaction_cases"))
skip_real <- nzchar(Sys.getenv("MIXRANK_INTERACTION_SKIP_REAL"))
ctrl <- lmerControl(optimizer = "bobyqa", optCtrl = list(rhoend = 1e-12, maxfun = 1e5))

paired_d <- function(df, keys, covs, a, b) {
  key <- function(x) do.call(paste, c(unname(as.list(x[keys])), sep = "\r"))
  A <- df[df$model == a, ]; B <- df[df$model == b, ]
  ka <- key(A); kb <- key(B)
  stopifnot(!anyDuplicated(ka), !anyDuplicated(kb))
  common <- intersect(ka, kb)
  out <- A[match(common, ka), c(keys, covs), drop = FALSE]
  out$d <- A$correct[match(common, ka)] - B$correct[match(common, kb)]
  rownames(out) <- NULL
  list(data = out, n = length(common), only_a = nrow(A) - length(common),
       only_b = nrow(B) - length(common))
}

parse_formula <- function(formula) {
  rhs <- trimws(sub("^[^~]*~", "", formula))
  terms <- regmatches(rhs, gregexpr("\\(1\\s*\\|\\s*[^)]+\\)", rhs))[[1]]
  groups <- gsub("\\s", "", sub("^\\(1\\s*\\|\\s*", "", sub("\\)$", "", terms)))
  fixed <- gsub("\\(1\\s*\\|\\s*[^)]+\\)", "", rhs)
  while (grepl("\\+\\s*\\+", fixed)) fixed <- gsub("\\+\\s*\\+", "+", fixed)
  fixed <- trimws(gsub("^\\s*\\+|\\+\\s*$", "", trimws(fixed)))
  # fixed part of the interaction for d: drop 'model' from each term of the expansion
  tl <- attr(terms(as.formula(paste("~", fixed))), "term.labels")
  dterms <- unique(unlist(lapply(strsplit(tl[grepl("(^|:)model(:|$)", tl)], ":"),
                                 function(f) paste(setdiff(f, "model"), collapse = ":"))))
  dterms <- dterms[nzchar(dterms)]
  list(groups = groups, dterms = dterms)
}

grid_L <- function(fixed_rhs, pd, covs, levels_of, by, at) {
  cat_covs <- covs[sapply(covs, function(c) !is.null(levels_of[[c]]))]
  num_covs <- setdiff(covs, cat_covs)
  other <- setdiff(cat_covs, by)
  g <- if (length(other)) expand.grid(lapply(levels_of[other], identity), stringsAsFactors = FALSE)
       else data.frame(row = 1)
  for (c in num_covs) g[[c]] <- mean(pd[[c]])
  g[[by]] <- at
  for (c in cat_covs) g[[c]] <- factor(g[[c]], levels = levels_of[[c]])
  colMeans(model.matrix(as.formula(paste("~", fixed_rhs)), g))
}

estimable <- function(L, X) {
  q <- qr(X, tol = 1e-10)
  Q <- qr.Q(q)[, seq_len(q$rank), drop = FALSE]
  # L in the row space of X: L = X'a for some a, i.e. L orthogonal to null(X)
  Pl <- qr.coef(qr(t(X)), L)
  Pl[is.na(Pl)] <- 0
  max(abs(t(X) %*% Pl - L)) < 1e-8 * max(1, max(abs(L)))
}

fit_pair <- function(pd, fo, covs, levels_of, by_list) {
  dat <- pd$data
  for (c in names(levels_of)) if (!is.null(levels_of[[c]])) dat[[c]] <- factor(dat[[c]], levels = levels_of[[c]])
  fixed_rhs <- paste(c("1", fo$dterms), collapse = " + ")
  f <- as.formula(paste("d ~", fixed_rhs, "+", paste0("(1|", fo$groups, ")", collapse = " + ")))
  msgs <- character(0)
  m <- withCallingHandlers(lmerTest::lmer(f, data = dat, REML = TRUE, control = ctrl),
    warning = function(w) { msgs <<- c(msgs, conditionMessage(w)); invokeRestart("muffleWarning") },
    message = function(w) { msgs <<- c(msgs, trimws(conditionMessage(w))); invokeRestart("muffleMessage") })
  co <- summary(m)$coefficients
  vc <- as.data.frame(VarCorr(m))
  comps <- list()
  for (g in fo$groups) comps[[g]] <- vc$vcov[vc$grp == g]
  comps[["residual"]] <- vc$vcov[vc$grp == "Residual"]
  an <- anova(m, type = 3)
  Xfull <- model.matrix(as.formula(paste("~", fixed_rhs)), dat)
  kept <- names(fixef(m))
  contrasts <- list()
  for (by in by_list) {
    ats <- if (is.null(levels_of[[by]])) list("per unit") else as.list(levels_of[[by]])
    for (at in ats) {
      L <- if (identical(at, "per unit")) {
        mu <- mean(dat[[by]])
        grid_L(fixed_rhs, dat, covs, levels_of, by, mu + 1) - grid_L(fixed_rhs, dat, covs, levels_of, by, mu)
      } else grid_L(fixed_rhs, dat, covs, levels_of, by, at)
      if (!estimable(L, Xfull)) next
      r <- contest(m, matrix(L[kept], nrow = 1), joint = FALSE)
      contrasts[[length(contrasts) + 1]] <- list(by = by, level = at, estimate = r$Estimate,
        std_error = r[["Std. Error"]], df = r$df)
    }
  }
  direct <- NULL
  if (length(covs) == 1 && !is.null(levels_of[[covs]])) {
    f0 <- as.formula(paste("d ~ 0 +", covs, "+", paste0("(1|", fo$groups, ")", collapse = " + ")))
    dd <- dat; dd[[covs]] <- droplevels(dd[[covs]])
    m0 <- suppressMessages(lmerTest::lmer(f0, data = dd, REML = TRUE, control = ctrl))
    c0 <- summary(m0)$coefficients
    direct <- list(level = I(sub(paste0("^", covs), "", rownames(c0))), estimate = I(unname(c0[, 1])),
                   std_error = I(unname(c0[, 2])), df = I(unname(c0[, 3])))
  }
  list(n = pd$n, only_a = pd$only_a, only_b = pd$only_b, REMLcrit = REMLcrit(m),
       components = comps, isSingular = isSingular(m),
       coefficients = list(name = I(rownames(co)), estimate = I(unname(co[, 1])),
                           std_error = I(unname(co[, 2])), df = I(unname(co[, 3]))),
       anova = list(term = I(rownames(an)), F = I(unname(an[["F value"]])),
                    num_df = I(unname(an$NumDF)), den_df = I(unname(an$DenDF))),
       contrasts = contrasts, direct = direct, messages = I(unique(msgs)))
}

run_case <- function(name, source, df, formula, pairs, by_list, extra = list()) {
  fo <- parse_formula(formula)
  covs <- unique(unlist(strsplit(fo$dterms, ":")))
  levels_of <- lapply(setNames(covs, covs), function(c) if (is.numeric(df[[c]])) NULL else sort(unique(as.character(df[[c]])), method = "radix"))
  cat(sprintf("%-14s %s\n", name, formula))
  res <- lapply(pairs, function(p) {
    pd <- paired_d(df, c("subject", "question", "prompt"), covs, p[[1]], p[[2]])
    r <- fit_pair(pd, fo, covs, levels_of, by_list)
    cat(sprintf("    %s - %s: n=%d crit=%.6f\n", p[[1]], p[[2]], r$n, r$REMLcrit))
    c(list(model_a = p[[1]], model_b = p[[2]]), r)
  })
  # each model's own scores with the same fixed part (model_scores(by = ...))
  models <- lapply(sort(unique(df$model), method = "radix"), function(m) {
    rows <- df[df$model == m, c("subject", "question", "prompt", covs, "correct")]
    rows$d <- rows$correct
    r <- fit_pair(list(data = rows, n = nrow(rows), only_a = 0L, only_b = 0L), fo, covs,
                  levels_of, by_list)
    list(model = m, n = nrow(rows), contrasts = r$contrasts, isSingular = r$isSingular)
  })
  c(list(name = name, source = source, formula = formula, by = I(by_list)), extra,
    list(pairs = res, models = models))
}

cases <- list()
manifest <- fromJSON(file.path(case_dir, "cases.json"), simplifyVector = FALSE)
for (cs in manifest) {
  df <- read.csv(file.path(case_dir, cs$file), stringsAsFactors = FALSE)
  cases[[length(cases) + 1]] <- run_case(cs$name, "simulated", df, cs$formula, cs$pairs,
                                         unlist(cs$by), list(file = cs$file))
}

if (!skip_real) {
  jb_path <- file.path(data_dir, "jailbreakbench", "long.csv.gz")
  if (!file.exists(jb_path)) stop("shared data file not found: ", jb_path)
  jb <- read.csv(jb_path, stringsAsFactors = FALSE)
  jb_pairs <- combn(sort(unique(jb$model)), 2, simplify = FALSE)
  cases[[length(cases) + 1]] <- run_case("jailbreakbench", "shared", jb,
    "correct ~ model * prompt + (1|subject)", jb_pairs, "prompt",
    list(dataset = "jailbreakbench"))
}

versions <- list(R = R.version.string, lme4 = as.character(packageVersion("lme4")),
                 lmerTest = as.character(packageVersion("lmerTest")))
out <- list(generator = "tests/reference/interactions.R",
            regenerate = "Rscript tests/reference/interactions.R [DATA_DIR]  (from the repository root)",
            versions = versions,
            control = "lmerControl(optimizer = 'bobyqa', optCtrl = list(rhoend = 1e-12, maxfun = 1e5))",
            orientation = "d = y(model_a) - y(model_b) over common cells",
            cases = cases)
writeLines(toJSON(out, auto_unbox = TRUE, digits = NA, pretty = 1, null = "null"), out_path)
cat("wrote", out_path, "\n")
