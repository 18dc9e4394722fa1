# Reference fits of each model's own score, y ~ 1 + (random terms), by lme4 +
# lmerTest, for mixrank's FitResult.model_scores() (tests/results/test_scores_reference.py
# and the live check in tests/results/test_scores_live.py).
#
# Regenerate from the repository root:
#
#     Rscript tests/reference/model_scores.R [DATA_DIR]
#
# DATA_DIR is the real-data folder (default: $MIXRANK_DATA_DIR, else the
# datasets bundled in mixrank/datasets/ of this repository); the data are read in place.
# Output: tests/reference/model_scores.json next to this script.  Needs R with
# lme4, lmerTest and jsonlite; produced with R 4.2.2, lme4 1.1-31, lmerTest
# 3.1-3 (versions are recorded in the JSON).
#
# Live mode (one CSV, used by the live test on a fresh simulation):
#
#     Rscript tests/reference/model_scores.R --live IN.csv FORMULA KEYS OUT.json
#
# with KEYS the pairing keys separated by commas.
#
# For every case and model the cell scores are built exactly as mixrank
# builds them (a cell is one combination of the pairing keys; a cell's score is
# the mean over its replicate rows), then
#   lmerTest::lmer(y ~ 1 + (1|g1) + ..., REML = TRUE,
#                  control = lmerControl(optimizer = "bobyqa",
#                                        optCtrl = list(rhoend = 1e-12, maxfun = 1e5)))
# is fitted to the model's cells, and the JSON records n, REMLcrit, the
# variance components (names as in the formula, "residual"), the intercept's
# estimate, std_error and Satterthwaite df (summary(m)$coefficients) and
# isSingular(m).
#
# Cases: the simulated designs of tests/reference/engine_cases/ (balanced
# nested, crossed, unbalanced with 20% missing cells), ChemBench
# (prompt == "default", the six models of the engine reference, formula
# correct ~ model + (1|subject)) and JailbreakBench (all models,
# correct ~ model + (1|subject) + (1|prompt)).

suppressPackageStartupMessages({
  library(lme4)
  library(lmerTest)
  library(jsonlite)
})

ctrl <- lmerControl(optimizer = "bobyqa", optCtrl = list(rhoend = 1e-12, maxfun = 1e5))

parse_formula <- function(formula) {
  lhs <- trimws(sub("~.*$", "", formula))
  rhs <- trimws(sub("^[^~]*~", "", formula))
  terms <- regmatches(rhs, gregexpr("\\(1\\s*\\|\\s*[^)]+\\)", rhs))[[1]]
  fixed <- trimws(strsplit(gsub("\\(1\\s*\\|\\s*[^)]+\\)", "", rhs), "\\+")[[1]])
  fixed <- fixed[nzchar(fixed)]
  groups <- gsub("\\s", "", sub("^\\(1\\s*\\|\\s*", "", sub("\\)$", "", terms)))
  list(response = lhs, comparison = fixed[1], groups = groups)
}

model_cells <- function(df, response, keys) {
  key <- do.call(paste, c(unname(as.list(df[keys])), sep = "\r"))
  y <- tapply(df[[response]], key, mean)
  out <- df[match(names(y), key), keys, drop = FALSE]
  out$y <- as.numeric(y)
  for (k in keys) out[[k]] <- factor(out[[k]])
  rownames(out) <- NULL
  out
}

fit_model <- function(cells, groups) {
  f <- as.formula(paste("y ~ 1 +", paste0("(1|", groups, ")", collapse = " + ")))
  m <- suppressMessages(suppressWarnings(
    lmerTest::lmer(f, data = cells, REML = TRUE, control = ctrl)))
  co <- summary(m)$coefficients
  vc <- as.data.frame(VarCorr(m))
  comps <- list()
  for (g in groups) comps[[g]] <- vc$vcov[vc$grp == g]
  comps[["residual"]] <- vc$vcov[vc$grp == "Residual"]
  list(n = nrow(cells), REMLcrit = REMLcrit(m), components = comps,
       estimate = unname(co[1, "Estimate"]), std_error = unname(co[1, "Std. Error"]),
       df = unname(co[1, "df"]), isSingular = isSingular(m))
}

run_case <- function(name, df, formula, keys, models, extra = list()) {
  fo <- parse_formula(formula)
  cat(sprintf("%-20s %s\n", name, formula))
  res <- lapply(models, function(mm) {
    cells <- model_cells(df[df[[fo$comparison]] == mm, , drop = FALSE], fo$response, keys)
    r <- fit_model(cells, fo$groups)
    cat(sprintf("    %s: n=%d est=%.6g se=%.6g df=%.6g%s\n", mm, r$n, r$estimate,
                r$std_error, r$df, if (r$isSingular) " (singular)" else ""))
    c(list(model = mm), r)
  })
  c(list(name = name, formula = formula, pair_by = keys), extra, list(models = res))
}

versions <- list(R = R.version.string, lme4 = as.character(packageVersion("lme4")),
                 lmerTest = as.character(packageVersion("lmerTest")))

targs <- commandArgs(trailingOnly = TRUE)
if (length(targs) >= 1 && targs[1] == "--live") {
  df <- read.csv(targs[2], stringsAsFactors = FALSE)
  keys <- strsplit(targs[4], ",", fixed = TRUE)[[1]]
  fo <- parse_formula(targs[3])
  case <- run_case("live", df, targs[3], keys, sort(unique(df[[fo$comparison]])))
  writeLines(toJSON(list(versions = versions, case = case), auto_unbox = TRUE, digits = NA),
             targs[5])
  quit(save = "no")
}

args <- commandArgs(trailingOnly = FALSE)
file_arg <- sub("^--file=", "", args[grep("^--file=", args)])
ref_dir <- if (length(file_arg) == 1) dirname(normalizePath(file_arg)) else "tests/reference"
repo_root <- normalizePath(file.path(ref_dir, "..", ".."))
data_dir <- if (length(targs) >= 1) {
  targs[1]
} else if (nzchar(Sys.getenv("MIXRANK_DATA_DIR"))) {
  Sys.getenv("MIXRANK_DATA_DIR")
} else {
  file.path(repo_root, "mixrank", "datasets")
}
case_dir <- file.path(ref_dir, "engine_cases")
cases <- list()
manifest <- fromJSON(file.path(case_dir, "cases.json"), simplifyVector = FALSE)
for (cs in manifest) {
  if (!(cs$name %in% c("nested_balanced", "crossed", "unbalanced"))) next
  df <- read.csv(file.path(case_dir, cs$file), stringsAsFactors = FALSE)
  fo <- parse_formula(cs$formula)
  cases[[length(cases) + 1]] <- run_case(
    cs$name, df, cs$formula, unlist(cs$pair_by), sort(unique(df[[fo$comparison]])),
    list(source = "simulated", file = cs$file))
}

read_shared <- function(rel) {
  path <- file.path(data_dir, rel)
  if (!file.exists(path)) stop("shared data file not found: ", path)
  read.csv(path, stringsAsFactors = FALSE)
}
chem <- read_shared("chembench/long.csv.gz")
chem <- chem[chem$prompt == "default", ]
chem_models <- c("claude2", "claude3", "galactica_120b", "gpt-4o", "llama3-70b-instruct", "o1")
cases[[length(cases) + 1]] <- run_case(
  "chembench", chem, "correct ~ model + (1|subject)", c("subject", "question", "prompt"),
  chem_models, list(source = "shared", dataset = "chembench", filter = list(prompt = "default"),
                    models_used = chem_models))
jb <- read_shared("jailbreakbench/long.csv.gz")
cases[[length(cases) + 1]] <- run_case(
  "jailbreakbench", jb, "correct ~ model + (1|subject) + (1|prompt)",
  c("subject", "question", "prompt"), sort(unique(jb$model)),
  list(source = "shared", dataset = "jailbreakbench", filter = setNames(list(), character(0)),
       models_used = sort(unique(jb$model))))

out <- list(generator = "tests/reference/model_scores.R",
            regenerate = "Rscript tests/reference/model_scores.R [DATA_DIR]  (from the repository root)",
            versions = versions,
            control = "lmerControl(optimizer = 'bobyqa', optCtrl = list(rhoend = 1e-12, maxfun = 1e5))",
            model = "y ~ 1 + (random terms of the formula) over each model's cells; cell score = mean over replicates",
            cases = cases)
writeLines(toJSON(out, auto_unbox = TRUE, digits = NA, pretty = 1, null = "null"),
           file.path(ref_dir, "model_scores.json"))
cat("wrote", file.path(ref_dir, "model_scores.json"), "\n")
