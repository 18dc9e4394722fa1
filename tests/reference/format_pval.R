# Reference for mixrank/_display.py: how R prints p-values and significant digits.
# Run: Rscript tests/reference/format_pval.R  (writes tests/reference/format_pval.json)
library(jsonlite)
p <- c(0.0234375, 0.0874023, 0.000488281, 0.811035, 1, 0.0011, 0.99996, 0.05, 0.0009999,
       0.001, 0.3, 0.12345, 0.0456789, 0.999, 0.0100001, 0.00999, 0.5)
x <- c(0.0346109, 4335.23, 0.95, 2.09176, 11, 0.000141986, 0.0542473, 1.54446, 123.456,
       0.100049, 7.67348, -0.299456, 26.6862)
out <- list(
  p = p,
  # format.pval one value at a time: 2 significant digits, eps 0.001 ("<0.001")
  format_pval = vapply(p, function(v) format.pval(v, digits = 2, eps = 0.001), ""),
  x = x,
  signif4 = signif(x, 4),
  r_version = R.version.string
)
writeLines(toJSON(out, digits = NA, auto_unbox = TRUE, pretty = TRUE), "tests/reference/format_pval.json")
