# One live glmer fit for tests/engine/test_glmm_live.py (marker r).
# Usage: Rscript tests/reference/glmer_live.R DATA.csv "FORMULA" NAGQ OUT.json
# Fits glmer(FORMULA, family = binomial, nAGQ = NAGQ) with the tight control of
# tests/reference/glmer.R and writes fixef, SEs, variance components,
# deviance (-2 logLik) and warnings.
suppressPackageStartupMessages({
  library(lme4)
  library(jsonlite)
})
a <- commandArgs(trailingOnly = TRUE)
df <- read.csv(a[1])
msgs <- character(0)
m <- withCallingHandlers(
  glmer(as.formula(a[2]), data = df, family = binomial, nAGQ = as.integer(a[3]),
        control = glmerControl(optimizer = "bobyqa", tolPwrss = 1e-12,
                               optCtrl = list(rhoend = 1e-10, maxfun = 1e5))),
  warning = function(w) { msgs <<- c(msgs, conditionMessage(w)); invokeRestart("muffleWarning") },
  message = function(w) { msgs <<- c(msgs, conditionMessage(w)); invokeRestart("muffleMessage") })
vc <- as.data.frame(VarCorr(m))
out <- list(fixef = as.list(fixef(m)), std_error = as.list(sqrt(diag(as.matrix(vcov(m))))),
            components = as.list(setNames(vc$vcov, vc$grp)),
            deviance = -2 * as.numeric(logLik(m)), warnings = msgs)
writeLines(toJSON(out, auto_unbox = TRUE, digits = NA), a[4])
