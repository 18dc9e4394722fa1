# Reference fit of the Rasch model as a binomial GLMM, for mixrank.subset.irt
# (tests/subset/test_irt.py::test_rasch_glmm_matches_glmer).
#
# Regenerate from the repository root:
#
#     python tests/reference/make_subset_rasch_case.py   # only if the design changes
#     Rscript tests/reference/subset_rasch.R
#
# Fits glmer(correct ~ 0 + model + (1 | question), binomial, nAGQ = 0) on
# tests/reference/subset_cases/rasch.csv (10 models x 80 items, 0/1) with tight
# bobyqa settings, and writes subset_rasch.json next to this script: the model
# fixed effects, the item conditional modes, the item variance, versions.
suppressMessages({library(lme4); library(jsonlite)})
args <- commandArgs(trailingOnly = FALSE)
here <- dirname(normalizePath(sub("--file=", "", args[grep("--file=", args)])))
d <- read.csv(file.path(here, "subset_cases", "rasch.csv"), stringsAsFactors = TRUE)
fit <- glmer(correct ~ 0 + model + (1 | question), data = d, family = binomial, nAGQ = 0,
             control = glmerControl(optimizer = "bobyqa", tolPwrss = 1e-12,
                                    optCtrl = list(rhoend = 1e-10, maxfun = 1e5)))
re <- ranef(fit)$question
out <- list(
  call = "glmer(correct ~ 0 + model + (1 | question), binomial, nAGQ = 0, bobyqa tight)",
  fixef = as.list(fixef(fit)),
  item_mode = setNames(as.list(re[, 1]), rownames(re)),
  item_variance = as.numeric(VarCorr(fit)$question[1]),
  versions = list(R = R.version.string, lme4 = as.character(packageVersion("lme4")))
)
write_json(out, file.path(here, "subset_rasch.json"), auto_unbox = TRUE, digits = 15,
           pretty = TRUE)
