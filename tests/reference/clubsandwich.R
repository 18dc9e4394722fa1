# clubSandwich reference for mixrank's CR2 sandwiches and Bell-McCaffrey df
# (docs/methods.md §9, "CR2 and clubSandwich"; tests/engine/test_clubsandwich.py).
#
# Regenerate from the repository root:
#
#     python tests/reference/make_clubsandwich_cases.py
#     Rscript tests/reference/clubsandwich.R
#
# Reads tests/reference/clubsandwich_cases.json and writes tests/reference/clubsandwich.json
# next to this script.  Needs R with clubSandwich and jsonlite; produced with R 4.2.2 and
# clubSandwich 0.5.8 (versions are recorded in the JSON).
#
# Live mode (the live test, on fresh seeds):
#
#     Rscript tests/reference/clubsandwich.R --live IN.json OUT.json
#
# Every case is one vcovCR(..., type = "CR2") + Satterthwaite (Bell-McCaffrey) df, in
# clubSandwich's modes:
#
#   kind "lm" (fit(..., df = "cr2"), one pair, estimand cells / units / gls):
#     m <- lm(d ~ 1, weights = w), cluster = the pair's subject codes, Omega_t =
#     I + ratio 11' the fitted working covariance per cluster (residual units);
#     "weights": vcovCR(m, cluster, "CR2", inverse_var = TRUE): the working model of
#       the weights themselves (W^-1; for cells the identity, clubSandwich's default);
#     "target":  vcovCR(m, cluster, "CR2", target = Omega): adjustment and df under Omega;
#     "mix":     the "weights" adjustment matrices with the df under Omega: the
#       "weights" vcovCR with its "target" attribute set to Omega and inverse_var FALSE,
#       so that clubSandwich's own coef_test(test = "Satterthwaite") computes the df of
#       the weights-adjusted estimator under Omega (mixrank's rule, methods.md §9).
#   kind "glm" (arena(..., cluster=), no ties, prior 0): g <- glm(y ~ 0 + Z, binomial)
#     with Z the free BT design (+1 model_a, -1 model_b, first model the reference);
#     "target": vcovCR(g, cluster, "CR2") (the GLM's working covariance, clubSandwich's
#     default for glm) and linear_contrast for every pair; "whitened": the CR2 of the
#     whitened working regression, A_g = (I - H~_gg)^-1/2 (mixrank's arena), computed densely
#     here by its definition (whitened_cr2 below).  The two are CR2 adjustments unbiased
#     under the same working covariance that differ in the square root taken:
#     clubSandwich's A_g = D_g' B_g^-1/2 D_g with D_g the Cholesky factor of the target
#     (Pustejovsky & Tipton 2018, eq. 6) does not commute with the weights.
#   kind "judge" (PPI++ mean at one unit): lm(z ~ 0 + x1 + x2) with x1 = labelled,
#     x2 = 1 - 2 labelled, so the first coefficient is the sum of the two parts' means
#     (the estimate); "identity": vcovCR(m, cluster, "CR2"); "target": target = each
#     part's variance on its cells.

suppressPackageStartupMessages({
  library(clubSandwich)
  library(jsonlite)
})

num <- function(x) as.numeric(unlist(x))

lm_case <- function(cs) {
  d <- num(cs$d); w <- num(cs$w); cl <- factor(num(cs$cluster)); r <- cs$ratio
  m <- lm(d ~ 1, weights = w)
  omega <- lapply(split(seq_along(d), cl), function(ix) {
    diag(length(ix)) + r * matrix(1, length(ix), length(ix))
  })
  one <- function(v) {
    ct <- coef_test(m, vcov = v, test = "Satterthwaite")
    list(se = ct$SE[1], df = ct$df_Satt[1])
  }
  vw <- vcovCR(m, cluster = cl, type = "CR2", inverse_var = TRUE)
  vt <- vcovCR(m, cluster = cl, type = "CR2", target = omega)
  vm <- vw
  attr(vm, "target") <- omega
  attr(vm, "inverse_var") <- FALSE
  vi <- vcovCR(m, cluster = cl, type = "CR2")
  list(design = cs$design, estimand = cs$estimand, pair = cs$pair,
       identity = one(vi), weights = one(vw), target = one(vt), mix = one(vm))
}

glm_case <- function(cs) {
  models <- unlist(cs$models)
  a <- unlist(cs$a); b <- unlist(cs$b); y <- num(cs$y)
  Z <- sapply(models[-1], function(mm) (a == mm) - (b == mm))
  g <- glm(y ~ 0 + Z, family = binomial,
           control = glm.control(epsilon = 1e-15, maxit = 200))
  v <- vcovCR(g, cluster = factor(unlist(cs$cluster)), type = "CR2")
  K <- length(models)
  L <- NULL
  labels <- character(0)
  for (i in 1:(K - 1)) for (j in (i + 1):K) {
    row <- numeric(K)
    row[i] <- 1
    row[j] <- -1
    L <- rbind(L, row[-1])
    labels <- c(labels, paste(models[i], "-", models[j]))
  }
  lc <- linear_contrast(g, vcov = v, contrasts = L, test = "Satterthwaite")
  list(design = cs$design, pairs = labels,
       target = list(se = lc$SE, df = lc$df), whitened = whitened_cr2(g, cs$cluster, L))
}

# The CR2 of the GLM's whitened working regression (mixrank's arena, docs/arena.md §4):
# X~ = W^1/2 Z, A_g = (I - H~_gg)^-1/2 by eigen-decomposition, u_g = X~_g' A_g W_g^-1/2 e_g,
# V = B (sum u_g u_g') B; Bell-McCaffrey df of c'theta from the N x N projection:
# var = sum_g (p_g' eps)^2 with eps ~ N(0, I) whitened, p_g = (I - H~)[g, ]' A_g X~_g B c,
# df = tr(P'P)^2 / tr((P'P)^2).  Dense, by the definitions (N is small here).
whitened_cr2 <- function(g, cluster, L) {
  Z <- model.matrix(g)
  mu <- fitted(g)
  s <- sqrt(mu * (1 - mu))
  Xt <- s * Z
  B <- solve(crossprod(Xt))
  IH <- diag(nrow(Z)) - Xt %*% B %*% t(Xt)
  e <- (g$y - mu) / s
  idx <- split(seq_len(nrow(Z)), factor(unlist(cluster)))
  A <- lapply(idx, function(ix) {
    ev <- eigen(IH[ix, ix, drop = FALSE], symmetric = TRUE)
    ev$vectors %*% diag(1 / sqrt(ev$values), length(ix)) %*% t(ev$vectors)
  })
  U <- t(mapply(function(ix, a) t(Xt[ix, , drop = FALSE]) %*% a %*% e[ix], idx, A))
  V <- B %*% crossprod(matrix(U, nrow = length(idx))) %*% B
  se <- sqrt(diag(L %*% V %*% t(L)))
  df <- apply(L, 1, function(cc) {
    P <- sapply(seq_along(idx), function(k) {
      ix <- idx[[k]]
      t(IH[ix, , drop = FALSE]) %*% (A[[k]] %*% (Xt[ix, , drop = FALSE] %*% (B %*% cc)))
    })
    M <- crossprod(P)
    sum(diag(M))^2 / sum(M * M)
  })
  list(se = unname(se), df = unname(df))
}

judge_case <- function(cs) {
  z <- num(cs$z); lab <- num(cs$labelled); cl <- factor(num(cs$cluster))
  x1 <- lab
  x2 <- 1 - 2 * lab
  m <- lm(z ~ 0 + x1 + x2)
  part_var <- ifelse(lab == 1, cs$var_labelled, cs$var_unlabelled)
  one <- function(v) {
    ct <- coef_test(m, vcov = v, test = "Satterthwaite")
    list(se = ct$SE[1], df = ct$df_Satt[1])
  }
  list(design = cs$design, estimate = unname(coef(m)[1]),
       identity = one(vcovCR(m, cluster = cl, type = "CR2")),
       target = one(vcovCR(m, cluster = cl, type = "CR2", target = part_var)))
}

run <- function(cases) {
  lapply(cases, function(cs) {
    switch(cs$kind, lm = c(list(kind = "lm"), lm_case(cs)),
           glm = c(list(kind = "glm"), glm_case(cs)),
           judge = c(list(kind = "judge"), judge_case(cs)))
  })
}

versions <- list(R = R.version.string,
                 clubSandwich = as.character(packageVersion("clubSandwich")))

targs <- commandArgs(trailingOnly = TRUE)
if (length(targs) >= 1 && targs[1] == "--live") {
  inp <- fromJSON(targs[2], simplifyVector = FALSE)
  writeLines(toJSON(list(versions = versions, cases = run(inp$cases)), auto_unbox = TRUE,
                    digits = NA), targs[3])
  quit(save = "no")
}

args <- commandArgs(trailingOnly = FALSE)
file_arg <- sub("^--file=", "", args[grep("^--file=", args)])
ref_dir <- if (length(file_arg) == 1) dirname(normalizePath(file_arg)) else "tests/reference"
inp <- fromJSON(file.path(ref_dir, "clubsandwich_cases.json"), simplifyVector = FALSE)
out <- list(generator = "tests/reference/clubsandwich.R",
            regenerate = paste("python tests/reference/make_clubsandwich_cases.py &&",
                               "Rscript tests/reference/clubsandwich.R  (from the repository root)"),
            versions = versions, seed = inp$seed, cases = run(inp$cases))
writeLines(toJSON(out, auto_unbox = TRUE, digits = NA, pretty = 1),
           file.path(ref_dir, "clubsandwich.json"))
cat("wrote", file.path(ref_dir, "clubsandwich.json"), "\n")
