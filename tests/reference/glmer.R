# Reference fits of the binomial GLMM by lme4::glmer, for mixrank's
# family="binomial" engine (tests/engine/test_glmm_reference.py).
#
# Regenerate from the repository root:
#
#     python tests/reference/make_glmm_cases.py      # only if the designs change
#     Rscript tests/reference/glmer.R [DATA_DIR]
#
# DATA_DIR is the real-data folder (default: $MIXRANK_DATA_DIR, else the
# datasets bundled in mixrank/datasets/ of this repository); the data are read in place,
# never copied.  Output: tests/reference/glmer.json next to this script.
# Needs R with lme4 and jsonlite.  Versions are recorded in the JSON.
#
# Every case is fitted with the formula exactly as written (glmer's literal
# reading: one joint model over all models), family = binomial, nAGQ = 1 and
# nAGQ = 0, twice each:
#   * "default": glmerControl() defaults (what a user gets; its warnings kept);
#   * "tight":   glmerControl(optimizer = "bobyqa", tolPwrss = 1e-12,
#                optCtrl = list(rhoend = 1e-10, maxfun = 1e5)) -- the optimum
#                to which mixrank's estimates are compared.
# Recorded: fixef, sqrt(diag(vcov)) (lme4's default: the finite-difference
# Hessian for nAGQ = 1, RX for nAGQ = 0), theta, the variance of each term,
# logLik, deviance = -2 logLik, AIC, BIC, nobs, isSingular, warnings.
#
# Cases:
#   * simulated designs in tests/reference/glmm_cases/cases.json (written by
#     make_glmm_cases.py, seeded): nested, crossed, unbalanced, kofn (counts
#     via cbind), replicates (0/1 rows, 4 samples per cell), ceiling;
#   * jailbreakbench: correct ~ model + (1|question) + (1|prompt) + (1|prompt:model);
#   * chembench4: prompt == "default", models gpt-4, gpt-4o, claude3,
#     llama3-70b-instruct: correct ~ model + (1|subject) + (1|question);
#   * multiprompt_bbh: BBH rows of models flan-t5-xl, flan-t5-xxl, t0pp and
#     tasks causal_judgement, navigate, snarks; counts n_correct of n_samples
#     per (model, task, template): cbind(n_correct, n_samples - n_correct) ~
#     model + (1|subject) + (1|subject:prompt).

suppressPackageStartupMessages({
  library(lme4)
  library(jsonlite)
})

args <- commandArgs(trailingOnly = FALSE)
file_arg <- sub("^--file=", "", args[grep("^--file=", args)])
ref_dir <- if (length(file_arg) == 1) dirname(normalizePath(file_arg)) else "tests/reference"
repo_root <- normalizePath(file.path(ref_dir, "..", ".."))
targs <- commandArgs(trailingOnly = TRUE)
data_dir <- if (length(targs) >= 1) {
  targs[1]
} else if (nzchar(Sys.getenv("MIXRANK_DATA_DIR"))) {
  Sys.getenv("MIXRANK_DATA_DIR")
} else {
  file.path(repo_root, "mixrank", "datasets")
}
out_path <- file.path(ref_dir, "glmer.json")
case_dir <- file.path(ref_dir, "glmm_cases")

tight <- glmerControl(optimizer = "bobyqa", tolPwrss = 1e-12,
                      optCtrl = list(rhoend = 1e-10, maxfun = 1e5))

one_fit <- function(formula, df, nagq, control) {
  msgs <- character(0)
  m <- withCallingHandlers(
    glmer(as.formula(formula), data = df, family = binomial, nAGQ = nagq, control = control),
    warning = function(w) { msgs <<- c(msgs, conditionMessage(w)); invokeRestart("muffleWarning") },
    message = function(w) { msgs <<- c(msgs, trimws(conditionMessage(w))); invokeRestart("muffleMessage") })
  vc <- as.data.frame(VarCorr(m))
  comps <- as.list(setNames(vc$vcov, vc$grp))
  conv <- m@optinfo$conv$lme4$messages
  list(fixef = as.list(fixef(m)), std_error = as.list(sqrt(diag(as.matrix(vcov(m))))),
       theta = as.list(getME(m, "theta")), components = comps,
       loglik = as.numeric(logLik(m)), deviance = -2 * as.numeric(logLik(m)),
       aic = AIC(m), bic = BIC(m), nobs = nobs(m), singular = isSingular(m),
       warnings = c(msgs, if (is.null(conv)) character(0) else conv))
}

run_case <- function(name, df, formula, source, extra = list()) {
  cat(name, "\n")
  fits <- list()
  for (nagq in c(1, 0)) {
    key <- paste0("nagq", nagq)
    t0 <- proc.time()[["elapsed"]]
    fits[[key]] <- list(default = one_fit(formula, df, nagq, glmerControl()),
                        tight = one_fit(formula, df, nagq, tight))
    fits[[key]]$seconds <- proc.time()[["elapsed"]] - t0
  }
  c(list(name = name, formula = formula, source = source, rows = nrow(df)), extra,
    list(fits = fits))
}

cases <- list()
meta <- fromJSON(file.path(case_dir, "cases.json"))
for (name in names(meta)) {
  df <- read.csv(gzfile(file.path(case_dir, meta[[name]]$file)))
  cases[[name]] <- run_case(name, df, meta[[name]]$formula, "simulated",
                            list(file = meta[[name]]$file, options = meta[[name]]$options))
}

read_shared <- function(path) {
  f <- file.path(data_dir, path)
  if (!file.exists(f)) return(NULL)
  read.csv(gzfile(f), stringsAsFactors = FALSE)
}

jbb <- read_shared("jailbreakbench/long.csv.gz")
if (!is.null(jbb)) {
  cases$jailbreakbench <- run_case(
    "jailbreakbench", jbb[, c("model", "subject", "question", "prompt", "correct")],
    "correct ~ model + (1|question) + (1|prompt) + (1|prompt:model)", "shared",
    list(dataset = "jailbreakbench/long.csv.gz", filter = list()))
}
chem <- read_shared("chembench/long.csv.gz")
if (!is.null(chem)) {
  keep <- c("gpt-4", "gpt-4o", "claude3", "llama3-70b-instruct")
  sub <- chem[chem$prompt == "default" & chem$model %in% keep,
              c("model", "subject", "question", "prompt", "correct")]
  cases$chembench4 <- run_case(
    "chembench4", sub, "correct ~ model + (1|subject) + (1|question)", "shared",
    list(dataset = "chembench/long.csv.gz", filter = list(prompt = "default", model = keep)))
}
mp <- read_shared("multiprompt/per_template.csv.gz")
if (!is.null(mp)) {
  keep_m <- c("flan-t5-xl", "flan-t5-xxl", "t0pp")
  keep_t <- c("causal_judgement", "navigate", "snarks")
  sub <- mp[mp$benchmark == "BBH" & mp$model %in% keep_m & mp$subject %in% keep_t,
            c("model", "subject", "prompt", "n_correct", "n_samples")]
  cases$multiprompt_bbh <- run_case(
    "multiprompt_bbh", sub,
    "cbind(n_correct, n_samples - n_correct) ~ model + (1|subject) + (1|subject:prompt)", "shared",
    list(dataset = "multiprompt/per_template.csv.gz",
         filter = list(benchmark = "BBH", model = keep_m, subject = keep_t)))
}

out <- list(generated_by = "tests/reference/glmer.R", r_version = R.version.string,
            lme4_version = as.character(packageVersion("lme4")), cases = cases)
writeLines(toJSON(out, auto_unbox = TRUE, digits = NA, pretty = TRUE), out_path)
cat("wrote", out_path, "\n")
