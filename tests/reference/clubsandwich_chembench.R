# clubSandwich's CR2 SE and Satterthwaite (Bell-McCaffrey) df of the paired mixed model
# lmer(d ~ 1 + (1|subject)) on ChemBench pairs: the reference of docs/make_validation.py
# (the Validation page). Input: a CSV of the per-question differences (columns question, d,
# subject, model_a, model_b) written by that script; output: tests/reference/clubsandwich_chembench.json.
#   Rscript tests/reference/clubsandwich_chembench.R differences.csv tests/reference/clubsandwich_chembench.json
suppressMessages({library(lme4); library(clubSandwich); library(jsonlite)})
args <- commandArgs(trailingOnly = TRUE)
df <- read.csv(args[1], stringsAsFactors = FALSE)
pairs <- unique(df[, c("model_a", "model_b")])
out <- list()
for (i in seq_len(nrow(pairs))) {
  m <- df[df$model_a == pairs$model_a[i] & df$model_b == pairs$model_b[i], ]
  f <- lmer(d ~ 1 + (1 | subject), data = m, REML = TRUE,
            control = lmerControl(optimizer = "bobyqa", optCtrl = list(rhoend = 1e-12)))
  ct <- coef_test(f, vcov = "CR2", cluster = m$subject, test = "Satterthwaite")
  out[[i]] <- list(model_a = pairs$model_a[i], model_b = pairs$model_b[i], n = nrow(m),
                   estimate = unname(fixef(f)[1]), std_error = ct$SE, df = ct$df_Satt)
}
res <- list(generator = "tests/reference/clubsandwich_chembench.R",
            versions = list(lme4 = as.character(packageVersion("lme4")),
                            clubSandwich = as.character(packageVersion("clubSandwich"))),
            pairs = out)
writeLines(toJSON(res, auto_unbox = TRUE, digits = NA, pretty = TRUE), args[2])
