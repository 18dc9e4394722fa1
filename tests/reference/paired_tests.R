# Reference values for mixrank.inference.paired and mixrank.inference.multiplicity.
#
# Regenerate (from the repository root, needs only base R + jsonlite):
#
#     Rscript tests/reference/paired_tests.R
#
# It writes tests/reference/paired_tests.json next to this script.  The tests
# (tests/inference/test_paired.py, tests/inference/test_multiplicity.py) read
# that JSON and need no R.  Every input vector is written inline below and is
# copied into the JSON, so the Python side uses exactly these numbers.
#
# Calls covered: mcnemar.test (correct = TRUE / FALSE), binom.test on b of
# b + c (the two-sided exact McNemar test), the mid-p McNemar test by its
# textbook formula (Fagerland, Lydersen & Laake 2013: exact p minus the point
# probability), t.test(paired = TRUE) with every alternative and two
# confidence levels, wilcox.test(paired = TRUE) with exact = NULL / TRUE /
# FALSE and correct = TRUE / FALSE, and p.adjust (bonferroni, holm, BH).
# Produced with R 4.2.2 (Debian r-base) and jsonlite.

suppressPackageStartupMessages(library(jsonlite))

args <- commandArgs(trailingOnly = FALSE)
file_arg <- sub("^--file=", "", args[grep("^--file=", args)])
out_dir <- if (length(file_arg) == 1) dirname(normalizePath(file_arg)) else "tests/reference"
out_path <- file.path(out_dir, "paired_tests.json")

# ---------------------------------------------------------------- data ------
# Binary (0/1) pairs: x = model A, y = model B, aligned by position.
# b = #(x = 1, y = 0) (only A right), c = #(x = 0, y = 1) (only B right).
binary <- list(
  # n = 30, b = 8, c = 2 (small b + c, exact and mid-p differ visibly)
  bin30 = list(
    x = c(1, 0, 1, 1, 0, 1, 1, 1, 0, 1, 1, 0, 1, 1, 1, 0, 0, 1, 1, 1,
          1, 0, 1, 1, 0, 1, 1, 0, 1, 1),
    y = c(1, 0, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 1, 0, 1, 0, 0, 0, 1, 1,
          0, 1, 1, 0, 0, 1, 1, 0, 1, 0)
  ),
  # n = 12, b = 3, c = 0 (one-sided discordance)
  bin_only_b = list(
    x = c(1, 1, 0, 1, 1, 0, 1, 0, 1, 1, 0, 1),
    y = c(1, 0, 0, 1, 0, 0, 1, 0, 1, 0, 0, 1)
  ),
  # n = 16, b = c = 3 (p = 1 for exact and mid-p; mcnemar.test applies no
  # continuity correction when b = c, so its corrected statistic is 0)
  bin_equal = list(
    x = c(1, 0, 1, 0, 1, 1, 0, 1, 0, 1, 1, 0, 1, 0, 1, 1),
    y = c(0, 1, 1, 0, 0, 1, 1, 1, 0, 0, 1, 1, 1, 0, 1, 1)
  ),
  # n = 400, b = 60, c = 40 (large b + c, asymptotic regime); blocks of
  # (1,1), (1,0), (0,1), (0,0) interleaved so that order is not sorted
  bin400 = local({
    cells <- c(rep("11", 180), rep("10", 60), rep("01", 40), rep("00", 120))
    idx <- as.vector(t(matrix(seq_along(cells), nrow = 40)))  # fixed interleave
    cells <- cells[idx]
    list(x = as.numeric(substr(cells, 1, 1)), y = as.numeric(substr(cells, 2, 2)))
  }),
  # n = 2000, b = 110, c = 90 (close to the 55:45 split of docs/methods.md §6)
  bin2000 = list(
    x = c(rep(1, 1200), rep(1, 110), rep(0, 90), rep(0, 600)),
    y = c(rep(1, 1200), rep(0, 110), rep(1, 90), rep(0, 600))
  )
)

# Continuous (bounded) scores.
continuous <- list(
  # n = 10, no ties and no zeros in d: the exact signed-rank path
  cont10 = list(
    x = c(0.83, 0.61, 0.92, 0.47, 0.75, 0.58, 0.99, 0.36, 0.71, 0.64),
    y = c(0.71, 0.66, 0.73, 0.30, 0.79, 0.42, 0.90, 0.41, 0.48, 0.62)
  ),
  # n = 12, quarter scores: ties and 4 zeros in d
  quart12 = list(
    x = c(0.5, 0.75, 0.5, 0.75, 0.5, 0.75, 1, 0, 0.5, 0.5, 0.25, 0.25),
    y = c(0, 0.75, 1, 0.25, 0.5, 1, 1, 0, 0, 0.75, 0, 0)
  ),
  # n = 60, no ties and no zeros in |d| (exact = NULL gives the normal
  # approximation because n >= 50; exact = TRUE gives psignrank)
  cont60 = list(
    x = c(0.2750, 0.5576, 0.1927, 0.5136, 0.6108, 0.1329, 0.2740, 0.3006, 0.4925, 0.7981,
          0.1277, 0.3721, 0.6865, 0.5393, 0.3659, 0.9166, 0.3729, 0.6216, 0.1202, 0.8902,
          0.7918, 0.1116, 0.3702, 0.1242, 0.7125, 0.1438, 0.8223, 0.9292, 0.9802, 0.9112,
          0.0894, 0.7225, 0.4636, 0.4289, 0.5864, 0.3410, 0.9031, 0.3406, 0.8744, 0.8158,
          0.0037, 0.1833, 0.6861, 0.0965, 0.4368, 0.2011, 0.9667, 0.1191, 0.6161, 0.2434,
          0.2399, 0.0837, 0.9791, 0.5735, 0.9832, 0.1619, 0.1842, 0.0799, 0.7455, 0.8237),
    y = c(0.1555, 0.6469, 0.3975, 0.3206, 0.8147, 0.1362, 0.1754, 0.1901, 0.6183, 0.9146,
          0.0000, 0.6084, 0.8684, 0.0295, 0.5010, 0.9425, 0.2085, 0.4289, 0.3296, 0.5835,
          1.0000, 0.0000, 0.3197, 0.0362, 0.7368, 0.0704, 0.4944, 0.6258, 0.8386, 1.0000,
          0.0000, 0.4145, 0.6264, 0.3130, 0.4320, 0.1943, 0.5437, 0.1823, 0.3636, 0.6991,
          0.0000, 0.0564, 0.5943, 0.0000, 0.9102, 0.3173, 0.9970, 0.0000, 0.7339, 0.0875,
          0.0688, 0.0000, 0.7570, 0.4100, 0.7158, 0.1785, 0.3128, 0.1373, 0.7498, 0.7123)
  ),
  # n = 60, quarter scores: many ties and 26 zeros in d
  quart60 = list(
    x = c(1, 0.75, 0.75, 1, 0.5, 0.75, 1, 0.25, 0, 0.25, 0.25, 1, 1, 0, 0.5, 1, 0, 0.75,
          0, 0.5, 1, 0.25, 0.25, 0.25, 0.75, 0.25, 1, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 1, 1,
          0.75, 0.75, 0.75, 0.25, 1, 0.5, 0.25, 1, 0, 1, 0.75, 0, 0, 0.5, 0, 0, 0.5, 1,
          0.5, 1, 1, 1, 0.75, 0.5, 0.5),
    y = c(0.75, 0.5, 0.5, 0.5, 0.75, 0.25, 0.5, 0, 0.25, 0.25, 0.5, 0.5, 1, 0, 0.25, 0.5,
          0, 1, 0, 0, 1, 0, 0.5, 0.5, 0.25, 0.25, 1, 0.75, 0.5, 0.5, 0, 0.5, 0.25, 0.5,
          0.5, 0.75, 0.75, 0.75, 0.25, 1, 0.5, 0, 1, 0, 0.5, 0.25, 0, 0, 0.5, 0, 0, 0,
          0.75, 0.75, 0.75, 0.75, 1, 1, 0.25, 0.5)
  )
)

# p-value vectors for p.adjust: ties, a 1, tiny values, unsorted order.
pvectors <- list(
  mixed = c(0.01, 0.04, 0.03, 0.04, 0.2, 1, 0.0001, 0.5, 0.049, 0.011, 0.3, 0.04),
  single = c(0.03),
  two = c(0.02, 0.03),
  spread = c(0.6132, 0.0012, 0.0457, 0.2771, 0.0089, 0.0213, 0.9015, 0.0334, 0.1402,
             0.0071, 0.0498, 0.3659, 0.0026, 0.7783, 0.0185, 0.0640, 0.4421, 0.0009,
             0.0311, 0.2100, 0.0550, 0.0102, 0.8400, 0.0049, 0.1230),
  all_equal = rep(0.02, 5),
  boundary = c(0, 1, 0.5, 0, 1)
)

# --------------------------------------------------------- helpers ----------
ci_bound <- function(v) if (is.finite(v)) v else if (v > 0) "Inf" else "-Inf"

# ------------------------------------------------------------- McNemar ------
mcnemar_rows <- list()
for (nm in names(binary)) {
  x <- binary[[nm]]$x
  y <- binary[[nm]]$y
  b <- sum(x == 1 & y == 0)
  c <- sum(x == 0 & y == 1)
  n_disc <- b + c
  tab <- table(factor(x, levels = c(1, 0)), factor(y, levels = c(1, 0)))
  mc_corr <- mcnemar.test(tab, correct = TRUE)
  mc_raw <- mcnemar.test(tab, correct = FALSE)
  bt <- binom.test(b, n_disc, p = 0.5, alternative = "two.sided")
  # Mid-p (Fagerland et al. 2013, eq. 3): the exact two-sided p-value minus
  # the point probability of the observed b (equivalently
  # 2 * pbinom(min(b, c), b + c, 0.5) - dbinom(min(b, c), b + c, 0.5)).
  # binom.test caps its p-value at 1 (b = c), where the mid-p value is 1.
  midp <- if (b == c) 1 else bt$p.value - dbinom(b, n_disc, 0.5)
  midp_formula <- 2 * pbinom(min(b, c), n_disc, 0.5) - dbinom(min(b, c), n_disc, 0.5)
  stopifnot(abs(midp - midp_formula) < 1e-12)
  mcnemar_rows[[length(mcnemar_rows) + 1]] <- list(
    dataset = nm, n = length(x), b = b, c = c,
    exact_statistic = unname(bt$statistic), exact_p = bt$p.value,
    midp = midp,
    corrected_statistic = unname(mc_corr$statistic), corrected_p = mc_corr$p.value,
    asymptotic_statistic = unname(mc_raw$statistic), asymptotic_p = mc_raw$p.value,
    call_exact = sprintf("binom.test(%d, %d, p = 0.5)", b, n_disc),
    call_corrected = "mcnemar.test(table(factor(x, levels = c(1, 0)), factor(y, levels = c(1, 0))), correct = TRUE)",
    call_asymptotic = "mcnemar.test(..., correct = FALSE)"
  )
}

# ------------------------------------------------------------- paired t -----
t_rows <- list()
all_data <- c(binary[c("bin30", "bin400")], continuous)
for (nm in names(all_data)) {
  x <- all_data[[nm]]$x
  y <- all_data[[nm]]$y
  for (alt in c("two.sided", "greater", "less")) {
    for (lev in c(0.95, 0.9)) {
      tt <- t.test(x, y, paired = TRUE, alternative = alt, conf.level = lev)
      t_rows[[length(t_rows) + 1]] <- list(
        dataset = nm, alternative = alt, level = lev,
        estimate = unname(tt$estimate), std_error = unname(tt$stderr),
        statistic = unname(tt$statistic), df = unname(tt$parameter),
        p_value = tt$p.value,
        ci_lower = ci_bound(tt$conf.int[1]), ci_upper = ci_bound(tt$conf.int[2]),
        call = sprintf("t.test(x, y, paired = TRUE, alternative = '%s', conf.level = %g)", alt, lev)
      )
    }
  }
}

# ------------------------------------------------------------- Wilcoxon -----
w_rows <- list()
for (nm in names(continuous)) {
  x <- continuous[[nm]]$x
  y <- continuous[[nm]]$y
  for (alt in c("two.sided", "greater", "less")) {
    for (ex in c("NULL", "TRUE", "FALSE")) {
      for (corr in c(TRUE, FALSE)) {
        exact_arg <- switch(ex, "NULL" = NULL, "TRUE" = TRUE, "FALSE" = FALSE)
        wt <- suppressWarnings(wilcox.test(x, y, paired = TRUE, alternative = alt,
                                           exact = exact_arg, correct = corr))
        w_rows[[length(w_rows) + 1]] <- list(
          dataset = nm, alternative = alt, exact = ex, correct = corr,
          statistic = unname(wt$statistic), p_value = wt$p.value,
          r_method = wt$method,
          call = sprintf("wilcox.test(x, y, paired = TRUE, alternative = '%s', exact = %s, correct = %s)",
                         alt, ex, corr)
        )
      }
    }
  }
}

# ------------------------------------------------------------- p.adjust -----
adj_rows <- list()
for (nm in names(pvectors)) {
  p <- pvectors[[nm]]
  adj_rows[[length(adj_rows) + 1]] <- list(
    name = nm, p = I(p),
    bonferroni = I(p.adjust(p, "bonferroni")),
    holm = I(p.adjust(p, "holm")),
    bh = I(p.adjust(p, "BH"))
  )
}

to_lists <- function(d) lapply(d, function(v) list(x = I(v$x), y = I(v$y)))

out <- list(
  generated_by = "tests/reference/paired_tests.R",
  r_version = R.version.string,
  jsonlite_version = as.character(packageVersion("jsonlite")),
  datasets = c(to_lists(binary), to_lists(continuous)),
  mcnemar = mcnemar_rows,
  t_test = t_rows,
  wilcox = w_rows,
  p_adjust = adj_rows
)

write_json(out, out_path, digits = NA, auto_unbox = TRUE, pretty = TRUE)
cat("wrote", out_path, "\n")
