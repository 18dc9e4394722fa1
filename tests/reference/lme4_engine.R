# Reference fits of the paired-difference mixed model by lme4 + lmerTest, for
# mixrank's REML engine (tests/engine/test_lme4_reference.py).
#
# Regenerate from the repository root:
#
#     python tests/reference/make_engine_cases.py      # only if the designs change
#     Rscript tests/reference/lme4_engine.R [DATA_DIR]
#
# DATA_DIR is the real-data folder (default: $MIXRANK_DATA_DIR, else the
# datasets bundled in mixrank/datasets/ of this repository); the data are read in place,
# never copied.  Output: tests/reference/lme4_engine.json next to this script.
# Needs R with lme4, lmerTest and jsonlite (Debian: apt-get install r-base-core
# r-cran-lme4 r-cran-lmertest r-cran-jsonlite).  Produced with R 4.2.2,
# lme4 1.1-31, lmerTest 3.1-3 (versions are recorded in the JSON).
#
# For every case and pair (model_a, model_b) the paired differences are built
# exactly as mixrank builds them (docs/methods.md §1-§3):
#   * a cell is one combination of the pairing keys (`keys`);
#   * a (model, cell) with several rows is legal only with a replicate column,
#     and its score is the mean over those rows;
#   * d = y_a - y_b over the cells where both models have a score.
# Then d ~ 1 + (1|g1) + (1|g2) + ... (terms as written in the mixrank formula,
# interactions such as subject:question passed to lme4 as such) is fitted by
#   lmerTest::lmer(..., REML = TRUE, control = lmerControl(optimizer = "bobyqa",
#                  optCtrl = list(rhoend = 1e-12, maxfun = 1e5)))
# and the JSON records n, REMLcrit(m), the variance components (VarCorr; names
# as in the formula, "residual" for the residual), the intercept's estimate,
# std_error, Satterthwaite df, t and p (summary(m)$coefficients, lmerTest's
# default Satterthwaite method), isSingular(m) (tolerance 1e-4 on theta),
# theta, the optimiser's messages and the number of function evaluations.
#
# Cases:
#   * simulated designs listed in tests/reference/engine_cases/cases.json
#     (written by make_engine_cases.py with mixrank.simulate, seeded);
#   * chembench: correct ~ model + (1|subject), rows with prompt == "default",
#     six pairs chosen for boundary (subject variance 0), near-boundary and
#     interior fits;
#   * jailbreakbench: correct ~ model + (1|subject) + (1|prompt), all 6 pairs
#     (pairs share only some attack methods, so (1|prompt) has 3-5 levels);
#   * chembench_humans: tool vs notool.  Every question was asked in one
#     condition only, so cells keyed by (subject, question) give no common
#     cell; instead each human is paired with itself: cells keyed by
#     (subject, model = the human), questions averaged within a cell
#     (replicate = "question"), 12 questions without a subject dropped.
#     Two formulas: correct ~ prompt + (1|subject) and
#     correct ~ prompt + (1|subject) + (1|model).

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
data_dir <- if (length(targs) >= 1) {
  targs[1]
} else if (nzchar(Sys.getenv("MIXRANK_DATA_DIR"))) {
  Sys.getenv("MIXRANK_DATA_DIR")
} else {
  file.path(repo_root, "mixrank", "datasets")
}
out_path <- file.path(ref_dir, "lme4_engine.json")
case_dir <- file.path(ref_dir, "engine_cases")

ctrl <- lmerControl(optimizer = "bobyqa", optCtrl = list(rhoend = 1e-12, maxfun = 1e5))

# ------------------------------------------------------------ differences ---
cell_means <- function(df, response, keys, replicate) {
  key <- do.call(paste, c(unname(as.list(df[keys])), sep = "\r"))
  if (is.null(replicate) && anyDuplicated(key)) {
    stop("duplicated (model, cell) rows without a replicate column: ", key[anyDuplicated(key)])
  }
  y <- tapply(df[[response]], key, mean)
  first <- df[match(names(y), key), keys, drop = FALSE]
  first$y <- as.numeric(y)
  first$key <- names(y)
  first
}

paired_d <- function(df, response, comparison, keys, replicate, a, b) {
  ya <- cell_means(df[df[[comparison]] == a, , drop = FALSE], response, keys, replicate)
  yb <- cell_means(df[df[[comparison]] == b, , drop = FALSE], response, keys, replicate)
  common <- intersect(ya$key, yb$key)
  out <- ya[match(common, ya$key), keys, drop = FALSE]
  out$d <- ya$y[match(common, ya$key)] - yb$y[match(common, yb$key)]
  for (k in keys) out[[k]] <- factor(out[[k]])
  rownames(out) <- NULL
  list(data = out, n = length(common), only_a = nrow(ya) - length(common),
       only_b = nrow(yb) - length(common))
}

# ------------------------------------------------------------------ fits ---
parse_formula <- function(formula) {
  lhs <- trimws(sub("~.*$", "", formula))
  rhs <- trimws(sub("^[^~]*~", "", formula))
  terms <- regmatches(rhs, gregexpr("\\(1\\s*\\|\\s*[^)]+\\)", rhs))[[1]]
  fixed <- trimws(strsplit(gsub("\\(1\\s*\\|\\s*[^)]+\\)", "", rhs), "\\+")[[1]])
  fixed <- fixed[nzchar(fixed)]
  groups <- gsub("\\s", "", sub("^\\(1\\s*\\|\\s*", "", sub("\\)$", "", terms)))
  list(response = lhs, comparison = fixed[1], groups = groups)
}

fit_pair <- function(pd, groups) {
  f <- as.formula(paste("d ~ 1 +", paste0("(1|", groups, ")", collapse = " + ")))
  msgs <- character(0)
  m <- withCallingHandlers(
    lmerTest::lmer(f, data = pd$data, REML = TRUE, control = ctrl),
    warning = function(w) { msgs <<- c(msgs, conditionMessage(w)); invokeRestart("muffleWarning") },
    message = function(w) { msgs <<- c(msgs, trimws(conditionMessage(w))); invokeRestart("muffleMessage") })
  co <- summary(m)$coefficients
  vc <- as.data.frame(VarCorr(m))
  comps <- list()
  for (g in groups) comps[[g]] <- vc$vcov[vc$grp == g]
  comps[["residual"]] <- vc$vcov[vc$grp == "Residual"]
  list(n = pd$n, only_a = pd$only_a, only_b = pd$only_b,
       REMLcrit = REMLcrit(m), components = comps,
       estimate = unname(co[1, "Estimate"]), std_error = unname(co[1, "Std. Error"]),
       df = unname(co[1, "df"]), t = unname(co[1, "t value"]), p = unname(co[1, "Pr(>|t|)"]),
       isSingular = isSingular(m), theta = I(unname(getME(m, "theta"))),
       theta_names = I(names(getME(m, "theta"))),
       feval = m@optinfo$feval, optimizer_message = m@optinfo$message,
       messages = I(unique(c(msgs, unlist(m@optinfo$conv$lme4$messages)))))
}

run_case <- function(name, source, df, formula, keys, replicate, pairs, extra = list()) {
  fo <- parse_formula(formula)
  cat(sprintf("%-28s %s\n", name, formula))
  res <- lapply(pairs, function(p) {
    pd <- paired_d(df, fo$response, fo$comparison, keys, replicate, p[[1]], p[[2]])
    r <- fit_pair(pd, fo$groups)
    cat(sprintf("    %s - %s: n=%d crit=%.6f est=%.6g se=%.6g df=%.6g%s\n", p[[1]], p[[2]],
                r$n, r$REMLcrit, r$estimate, r$std_error, r$df,
                if (r$isSingular) " (singular)" else ""))
    c(list(model_a = p[[1]], model_b = p[[2]]), r)
  })
  c(list(name = name, source = source, formula = formula, pair_by = keys,
         replicate = replicate), extra, list(pairs = res))
}

cases <- list()

# ------------------------------------------------------- simulated cases ---
manifest <- fromJSON(file.path(case_dir, "cases.json"), simplifyVector = FALSE)
for (cs in manifest) {
  df <- read.csv(file.path(case_dir, cs$file), stringsAsFactors = FALSE)
  cases[[length(cases) + 1]] <- run_case(
    cs$name, "simulated", df, cs$formula, unlist(cs$pair_by), cs$replicate, cs$pairs,
    list(file = cs$file))
}

# ------------------------------------------------------------ real data ---
read_shared <- function(rel) {
  path <- file.path(data_dir, rel)
  if (!file.exists(path)) stop("shared data file not found: ", path,
                               " (pass the data folder as the first argument)")
  read.csv(path, stringsAsFactors = FALSE)
}

chem <- read_shared("chembench/long.csv.gz")
chem <- chem[chem$prompt == "default", ]
chem_pairs <- list(
  c("claude2", "llama3-70b-instruct"),           # subject variance 0 (boundary)
  c("gpt-4o", "mistral-large-2-123b"),           # boundary
  c("claude3", "llama3-70b-instruct"),           # interior, share ~1e-4 (df ~ 2)
  c("claude3.5", "gpt-4o"),                      # interior, share ~0.003
  c("galactica_120b", "o1"),                     # interior, share ~0.09
  c("gpt-4", "llama2-70b-chat"))                 # interior, share ~0.18
cases[[length(cases) + 1]] <- run_case(
  "chembench", "shared", chem, "correct ~ model + (1|subject)",
  c("subject", "question", "prompt"), NULL, chem_pairs,
  list(dataset = "chembench", filter = list(prompt = "default"), drop_missing = list()))

jb <- read_shared("jailbreakbench/long.csv.gz")
jb_models <- sort(unique(jb$model))
jb_pairs <- lapply(combn(jb_models, 2, simplify = FALSE), identity)
cases[[length(cases) + 1]] <- run_case(
  "jailbreakbench", "shared", jb, "correct ~ model + (1|subject) + (1|prompt)",
  c("subject", "question", "prompt"), NULL, jb_pairs,
  list(dataset = "jailbreakbench", filter = setNames(list(), character(0)),
       drop_missing = list()))

hum <- read_shared("chembench/humans.csv.gz")
hum <- hum[!is.na(hum$subject) & nzchar(hum$subject), ]
for (fo in c("correct ~ prompt + (1|subject)", "correct ~ prompt + (1|subject) + (1|model)")) {
  nm <- if (grepl("model)", fo, fixed = TRUE)) "chembench_humans_crossed" else "chembench_humans"
  cases[[length(cases) + 1]] <- run_case(
    nm, "shared", hum, fo, c("subject", "model"), "question", list(c("tool", "notool")),
    list(dataset = "chembench_humans", filter = setNames(list(), character(0)),
         drop_missing = list("subject")))
}

# ---------------------------------------------------------------- output ---
versions <- list(R = R.version.string, lme4 = as.character(packageVersion("lme4")),
                 lmerTest = as.character(packageVersion("lmerTest")),
                 Matrix = as.character(packageVersion("Matrix")),
                 minqa = as.character(packageVersion("minqa")),
                 jsonlite = as.character(packageVersion("jsonlite")))
out <- list(
  generator = "tests/reference/lme4_engine.R",
  regenerate = "Rscript tests/reference/lme4_engine.R [DATA_DIR]  (from the repository root)",
  versions = versions,
  control = "lmerControl(optimizer = 'bobyqa', optCtrl = list(rhoend = 1e-12, maxfun = 1e5))",
  orientation = "d = y(model_a) - y(model_b) over common cells; cell score = mean over replicates",
  cases = cases)
writeLines(toJSON(out, auto_unbox = TRUE, digits = NA, pretty = 1, null = "null"), out_path)
cat("wrote", out_path, "\n")
