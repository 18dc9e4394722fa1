# clubSandwich reference for res.omnibus() (docs/methods.md §12; tests/results/test_omnibus.py).
#
# Regenerate from the repository root:
#
#     python tests/reference/make_omnibus_cases.py
#     Rscript tests/reference/omnibus.R
#
# Reads tests/reference/omnibus_cases.json and writes tests/reference/omnibus.json next to
# this script.  Needs R with clubSandwich and jsonlite (versions are recorded in the JSON).
#
# Live mode (the live test, on fresh seeds):
#
#     Rscript tests/reference/omnibus.R --live IN.json OUT.json
#
# Each case: m <- lm(correct ~ 0 + model) on the cells, the Wald test that every model
# coefficient is equal (constrain_equal over the model coefficients) with vcov = "CR2"
# clustered by subject and the HTZ small-sample F.

suppressPackageStartupMessages({
  library(clubSandwich)
  library(jsonlite)
})

one_case <- function(cs) {
  d <- data.frame(correct = as.numeric(unlist(cs$correct)),
                  model = factor(unlist(cs$model)), subject = factor(unlist(cs$subject)))
  m <- lm(correct ~ 0 + model, data = d)
  w <- Wald_test(m, constraints = constrain_equal("^model", reg_ex = TRUE), vcov = "CR2",
                 cluster = d$subject, test = "HTZ")
  list(design = cs$design, statistic = w$Fstat, df_num = w$df_num, df_den = w$df_denom,
       p_value = w$p_val)
}

versions <- list(R = R.version.string,
                 clubSandwich = as.character(packageVersion("clubSandwich")))

targs <- commandArgs(trailingOnly = TRUE)
if (length(targs) >= 1 && targs[1] == "--live") {
  inp <- fromJSON(targs[2], simplifyVector = FALSE)
  writeLines(toJSON(list(versions = versions, cases = lapply(inp$cases, one_case)),
                    auto_unbox = TRUE, digits = NA), targs[3])
  quit(save = "no")
}

args <- commandArgs(trailingOnly = FALSE)
file_arg <- sub("^--file=", "", args[grep("^--file=", args)])
ref_dir <- if (length(file_arg) == 1) dirname(normalizePath(file_arg)) else "tests/reference"
inp <- fromJSON(file.path(ref_dir, "omnibus_cases.json"), simplifyVector = FALSE)
out <- list(generator = "tests/reference/omnibus.R",
            regenerate = paste("python tests/reference/make_omnibus_cases.py &&",
                               "Rscript tests/reference/omnibus.R  (from the repository root)"),
            versions = versions, seed = inp$seed, cases = lapply(inp$cases, one_case))
writeLines(toJSON(out, auto_unbox = TRUE, digits = NA, pretty = 1),
           file.path(ref_dir, "omnibus.json"))
cat("wrote", file.path(ref_dir, "omnibus.json"), "\n")
