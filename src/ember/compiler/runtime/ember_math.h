/* ember's vector math for generated kernels: exp, log, tanh, sigmoid, erf, expm1, log1p, sinh,
 * cosh, asinh, acosh and atanh in float and double; atan, asin, acos and tan in float (below).
 *
 * Written branch-free (selects, no early returns) so that GCC/Clang vectorise loops that call
 * them under -O3 with IEEE flags (toolchain.FLAGS: no -ffast-math, so the explicit NaN/inf
 * selects below and the order of every operation are kept as written). Cody-Waite reductions
 * use fma, which rounds once: r = x - n*ln2_hi is exact, then the lo part is subtracted. Error bounds (measured against float64/
 * long double references over dense grids and tails in tests/compiler/test_codegen_math.py):
 *   float:  exp 1 ulp, log 2 ulp, tanh 2 ulp, sigmoid 3 ulp, erf 0.72 ulp (every float32), expm1 2 ulp, log1p 4 ulp,
 *           sinh 4 ulp, cosh 3 ulp, asinh 4 ulp, acosh 3 ulp, atanh 4 ulp; GELU's normal CDF and
 *           its gradient: below, at em_normal_cdff_pdf.
 *   double: exp 3 ulp, log 2 ulp, tanh 2 ulp, sigmoid 4 ulp, expm1 4 ulp, log1p 4 ulp, sinh 7 ulp,
 *           cosh 6 ulp, asinh 4 ulp, acosh 3 ulp, atanh 4 ulp; erf is libm's (scalar).
 *   atan, asin, acos, tan, sin and cos: below, where they are defined.
 */
#ifndef EMBER_MATH_H
#define EMBER_MATH_H
#include <math.h>
#include <stdint.h>
#include <string.h>

#define EM_INLINE static inline __attribute__((always_inline))

EM_INLINE float em_bits_to_f(int32_t i) { float f; memcpy(&f, &i, 4); return f; }
EM_INLINE int32_t em_f_to_bits(float f) { int32_t i; memcpy(&i, &f, 4); return i; }
EM_INLINE double em_bits_to_d(int64_t i) { double f; memcpy(&f, &i, 8); return f; }
EM_INLINE int64_t em_d_to_bits(double f) { int64_t i; memcpy(&i, &f, 8); return i; }

/* exp(x) = 2^n * p(r), r = x - n ln2 in [-ln2/2, ln2/2]; results overflow to inf and underflow
 * through the subnormals to 0 like libm's, and NaN passes (through r and p). x is clamped below
 * at -104 (NaN passes), n is rounded by adding 1.5 * 2^23 (n is then in v's low mantissa bits)
 * and capped at 128 as an integer (x above 89, inf included: r > 0, p > 0, and the result inf),
 * and 2^n is applied as 2^n1 * 2^n2, n1 = n >> 1, each a normal float for every n in
 * [-150, 128], so the only rounding of a subnormal or infinite result is the last product's.
 * With floor(x log2e + 0.5) for n, float clamps at both ends and selects for overflow,
 * subnormals and NaN (the form before session 28) GCC 12 vectorised about 53 instructions per
 * vector (it threaded the clamps' conditions into the selects), these 28: an exp loop 0.87 ->
 * 0.50 ns per float (AMD EPYC, AVX2), the same bits for every float but 16 (halfway cases of
 * x log2e, where n differs by one: 0.10-0.67 ulp against 0.33-0.90 before). */
EM_INLINE float em_expf(float x) {
    float xc = -104.0f > x ? -104.0f : x;
    const float shift = 12582912.0f;
    int32_t ni = em_f_to_bits(fmaf(xc, 1.44269504088896341f, shift)) - 0x4b400000;
    ni = ni < 128 ? ni : 128;
    float n = (float)ni;
    float r = fmaf(-n, 0.693359375f, xc);
    r = fmaf(-n, -2.12194440e-4f, r);
    float p = 1.9875691500e-4f;  /* Cephes expf's minimax polynomial */
    p = fmaf(p, r, 1.3981999507e-3f);
    p = fmaf(p, r, 8.3334519073e-3f);
    p = fmaf(p, r, 4.1665795894e-2f);
    p = fmaf(p, r, 1.6666665459e-1f);
    p = fmaf(p, r, 5.0000001201e-1f);
    p = fmaf(p * r, r, r) + 1.0f;
    int32_t n1 = ni >> 1, n2 = ni - n1;
    return p * em_bits_to_f((n1 + 127) << 23) * em_bits_to_f((n2 + 127) << 23);
}

EM_INLINE double em_exp(double x) {
    double xh = x > 710.0 ? 710.0 : x, xc = -746.0 > xh ? -746.0 : xh;
    double n = floor(xc * 1.4426950408889634 + 0.5);
    double r = fma(-n, 6.93147180369123816490e-01, xc);   /* ln2 hi (exact in 32 bits) */
    r = fma(-n, 1.90821492927058770002e-10, r);            /* ln2 lo */
    /* Taylor series to r^12/12!: the truncation is below 2e-17 relative for |r| <= ln2/2 */
    double p = 1.0 / 479001600.0;
    p = fma(p, r, 1.0 / 39916800.0);
    p = fma(p, r, 1.0 / 3628800.0);
    p = fma(p, r, 1.0 / 362880.0);
    p = fma(p, r, 1.0 / 40320.0);
    p = fma(p, r, 1.0 / 5040.0);
    p = fma(p, r, 1.0 / 720.0);
    p = fma(p, r, 1.0 / 120.0);
    p = fma(p, r, 1.0 / 24.0);
    p = fma(p, r, 1.0 / 6.0);
    p = fma(p, r, 0.5);
    p = fma(p * r, r, r) + 1.0;
    int64_t ni = (int64_t)n, low = ni < -1000;
    double y = em_bits_to_d(em_d_to_bits(p) + ((ni + (low ? 512 : 0)) << 52)) * (low ? 0x1p-512 : 1.0);
    y = ni > 1023 && p >= 1.0 ? INFINITY : y;
    return x != x ? x : y;
}

/* log(x) = e ln2 + 2 atanh(s), s = (m - 1)/(m + 1), m in [sqrt(1/2), sqrt(2)): |s| <= 0.1716,
 * so the odd series of atanh converges fast (to s^9 in float, s^21 in double). */
EM_INLINE float em_logf(float x) {
    int tiny = x < 1.17549435e-38f;
    float xs = tiny ? x * 8388608.0f : x;                 /* subnormals: scale by 2^23 */
    int32_t bits = em_f_to_bits(xs);
    int32_t e = ((bits >> 23) & 0xff) - 127;
    float m = em_bits_to_f((bits & 0x007fffff) | 0x3f800000);  /* [1, 2) */
    int big = m > 1.41421356f;
    m = big ? m * 0.5f : m;
    float ef = (float)(e + big) - (tiny ? 23.0f : 0.0f);
    float s = (m - 1.0f) / (m + 1.0f), z = s * s;
    float p = fmaf(fmaf(fmaf(1.0f / 9.0f, z, 1.0f / 7.0f), z, 1.0f / 5.0f), z, 1.0f / 3.0f);
    float lm = fmaf(2.0f * s * z, p, 2.0f * s);
    float y = fmaf(ef, 0.693359375f, fmaf(ef, -2.12194440e-4f, lm));
    y = x == 0.0f ? -INFINITY : y;
    y = x < 0.0f ? NAN : y;
    y = x == INFINITY ? x : y;
    return x != x ? x : y;
}

EM_INLINE double em_log(double x) {
    int64_t tiny = x < 2.2250738585072014e-308;  /* int64_t, as e: mixed widths kept GCC 12 from vectorising */
    double xs = tiny ? x * 4503599627370496.0 : x;          /* 2^52 */
    int64_t bits = em_d_to_bits(xs);
    int64_t e = ((bits >> 52) & 0x7ff) - 1023;
    double m = em_bits_to_d((bits & 0x000fffffffffffffLL) | 0x3ff0000000000000LL);
    int64_t big = m > 1.4142135623730951;
    m = big ? m * 0.5 : m;
    double ef = (double)(e + big) - (tiny ? 52.0 : 0.0);
    double s = (m - 1.0) / (m + 1.0), z = s * s;
    double p = 1.0 / 23.0;
    p = fma(p, z, 1.0 / 21.0); p = fma(p, z, 1.0 / 19.0); p = fma(p, z, 1.0 / 17.0);
    p = fma(p, z, 1.0 / 15.0); p = fma(p, z, 1.0 / 13.0); p = fma(p, z, 1.0 / 11.0);
    p = fma(p, z, 1.0 / 9.0); p = fma(p, z, 1.0 / 7.0); p = fma(p, z, 1.0 / 5.0);
    p = fma(p, z, 1.0 / 3.0);
    double lm = fma(2.0 * s * z, p, 2.0 * s);
    double y = fma(ef, 6.93147180369123816490e-01, fma(ef, 1.90821492927058770002e-10, lm));
    y = x == 0.0 ? -INFINITY : y;
    y = x < 0.0 ? NAN : y;
    y = x == INFINITY ? x : y;
    return x != x ? x : y;
}

/* tanh: an odd polynomial (float) or rational function (double, Cephes's) near 0 where
 * 1 - 2/(e^{2|x|} + 1) would cancel, that formula elsewhere; both of |x|, given x's sign
 * after (tanh(-0.0) is -0.0: a correction term added to x = -0.0 would round to +0.0). */
EM_INLINE float em_tanhf(float x) {
    float a = fabsf(x), z = x * x;
    float p = fmaf(fmaf(fmaf(fmaf(-5.70498872745e-3f, z, 2.06390887954e-2f), z,
                             -5.37397155531e-2f), z, 1.33314422036e-1f), z, -3.33332819422e-1f);
    float small = copysignf(fmaf(p * z, a, a), x);
    float large = copysignf(1.0f - 2.0f / (em_expf(2.0f * a) + 1.0f), x);
    return a < 0.625f ? small : large;
}

EM_INLINE double em_tanh(double x) {
    double a = fabs(x), z = x * x;
    double pn = fma(fma(-9.64399179425052238628e-1, z, -9.92877231001918586564e1), z,
                    -1.61468768441708447952e3);
    double pd = fma(fma(z + 1.12811678491632931402e2, z, 2.23548839060100448583e3), z,
                    4.84406305325125486048e3);
    double small = copysign(fma(a * z, pn / pd, a), x);
    double large = copysign(1.0 - 2.0 / (em_exp(2.0 * a) + 1.0), x);
    return a < 0.625 ? small : large;
}

/* sigmoid from e = exp(-|x|), so that the far negative side keeps its relative accuracy */
EM_INLINE float em_sigmoidf(float x) {
    float e = em_expf(-fabsf(x)), s = 1.0f / (1.0f + e);
    return x < 0.0f ? e * s : s;
}
EM_INLINE double em_sigmoid(double x) {
    double e = em_exp(-fabs(x)), s = 1.0 / (1.0 + e);
    return x < 0.0 ? e * s : s;
}

/* float erf in float arithmetic (no double, no division, no libm), max 0.72 ulp over every
 * float32: all 2^32 bit patterns swept against glibc's double erf (tests/compiler/
 * test_codegen_math.py sweeps the binades where the ranges meet and a stride of the rest), the
 * same results with and without FMA contraction. Both ranges are computed and one is selected,
 * on t = |x| with x's sign given after (erf is odd; -0.0 stays -0.0):
 *  t < 0.75: erf = t + t r(t^2), r a degree-5 polynomial for erf(t)/t - 1 (Abramowitz & Stegun
 *    7.1.5's series, refitted minimax); t^2 = s + sl exactly (fmaf), sl enters through r's
 *    linear coefficient; t is added last, in one rounding.
 *  t >= 0.75: erf = 1 - erfc, erfc(t) = exp(q), q = -t^2 + P0 + m(t - 0.75), m a degree-7
 *    polynomial for log(erfcx(t)) - P0 (erfcx(t) = e^{t^2} erfc(t), A&S 7.1.2), its error
 *    weighted by erfc(t). q = n ln2 + r with every large part exact: t^2 = h + l, P0 - n ln2_hi
 *    (few bits) and its difference with h (Sterbenz's lemma), so r carries only m's rounding;
 *    then erf = (1 - 2^n) - 2^n expm1(r), 1 - 2^n exact, one rounding in the last fmaf;
 *    expm1(r) = r + r^2 e(r), |r| <= ln2/2, e of degree 4. t is clamped to 3.92, beyond
 *    which erf rounds to 1 (erfc(3.92) < 2^-25): the formula gives exactly 1 there. m and e
 *    are evaluated in Estrin's scheme (pairs of terms, then powers of d and r): the large
 *    range's chain of dependent operations is 24 cycles shorter than by Horner's rule, and
 *    GELU's loop 7% faster with 256-bit vectors (AMD EPYC, AVX2, session 24), the same
 *    0.7169 ulp at most over every float in [0.5, 4].
 * The polynomials are weighted minimax fits (Lawson's iteratively reweighted least squares)
 * made for ember, their coefficients rounded to float one at a time, low order first, with
 * the higher ones refitted. GELU's loop over 512K floats (one thread, loaded Xeon): 0.32 ms
 * against 0.36 ms for the rational function in double it replaces with 512-bit vectors (what
 * toolchain picks with AVX-512), 0.48 against 0.47 ms with 256-bit ones: about 50 vector
 * operations per lane group, so the loop is bound by arithmetic, not by the division it lost. */
EM_INLINE float em_erff(float x) {
    float a = fabsf(x), s = a * a, sl = fmaf(a, a, -s);
    float r = -6.737572839e-04f;
    r = fmaf(r, s, 5.113156512e-03f); r = fmaf(r, s, -2.683433518e-02f);
    r = fmaf(r, s, 1.128337905e-01f); r = fmaf(r, s, -3.761262000e-01f);
    r = fmaf(r, s, 1.283791661e-01f);
    float small = fmaf(a, fmaf(-3.761262000e-01f, sl, r), a);
    float t = a > 3.92f ? 3.92f : a, h = t * t, l = fmaf(t, t, -h), d = t - 0.75f;
    float d2 = d * d, d4 = d2 * d2;                     /* m + P0 = log(erfcx(t)), Estrin's scheme */
    float m01 = fmaf(-7.258738279e-01f, d, 7.609971362e-05f), m23 = fmaf(-5.292420834e-02f, d, 1.921517551e-01f);
    float m45 = fmaf(-2.432184294e-03f, d, 1.279035863e-02f), m67 = fmaf(-1.929271457e-05f, d, 3.111142432e-04f);
    float m = fmaf(fmaf(m67, d2, m45), d4, fmaf(m23, d2, m01));
    const float p0 = -6.794433594e-01f, log2e = 1.44269504088896341f, shift = 12582912.0f;
    /* n = round(q / ln2) by adding 1.5 * 2^23: n is then in v's low mantissa bits */
    float v = fmaf(m - h, log2e, shift + p0 * log2e), n = v - shift;
    float rq = (fmaf(-n, 0.693359375f, p0) - h + m) - fmaf(n, -2.12194440e-4f, l);
    float r2 = rq * rq, e = fmaf(fmaf(1.394631341e-03f, r2, fmaf(8.371467702e-03f, rq, 4.166634008e-02f)), r2,
                                 fmaf(1.666649729e-01f, rq, 5.000000000e-01f));
    float u = fmaf(e, r2, rq), p2 = em_bits_to_f((em_f_to_bits(v) + 127) << 23);
    float y = copysignf(a < 0.75f ? small : fmaf(-p2, u, 1.0f - p2), x);
    return x != x ? x : y;
}

EM_INLINE double em_erf(double x) { return erf(x); }

/* The standard normal CDF Phi(x) and density phi(x) in float, for GELU (x Phi(x)) and its
 * gradient (Phi(x) + x phi(x)) from one exponential: with a = |x|,
 *   Phi(-a) = E Q(a),  E = exp(-a^2/2) = sqrt(2 pi) phi(a),  Q(a) = erfcx(a / sqrt 2) / 2,
 * and Phi(x) = 1 - Phi(-x) for x >= 0. So Phi(x) for x < 0 keeps its relative accuracy down to
 * the smallest normal float (erf's 1 + erf(x / sqrt 2) cancels there, in eager and torch alike).
 * E: Cody-Waite on -a^2/2 = -(h + l)/2 exactly (h = a*a, l its rounding, fmaf), Cephes expf's
 * polynomial by Estrin's scheme, 2^n from n's bits (n >= -126: a <= 13.2). Q = u P(u),
 * u = 1 / (1 + 0.3 a), P of degree 10 by Horner's rule (Estrin's scheme lost 1 ulp more to its
 * roundings), a relative minimax fit over a in [0, 13.2] (Lawson's iteratively reweighted least
 * squares, made for ember; coefficients rounded to float one at a time, low order first, the
 * rest refitted: 2e-9 relative). Beyond a = 13.2 Phi(-a) and phi(a) are below the smallest
 * normal float: 0 there (x phi(x) at x = -inf is then NaN, as eager's). Over |x| <= 13 (a
 * stride of every float32 against float64, tests/compiler/test_perf_27.py): Phi 3.9 ulp,
 * x Phi(x) 4.2 ulp, Phi + x phi 3.6 ulp of |Phi| + |x phi| (1.6e-7 absolute); em_erff's GELU
 * had 1-2 ulp for x > -1 and lost all relative accuracy in the tail (x = -5: 1e-2).
 * Both results cost about 60 vector operations and a division per 8 floats; the forward with
 * em_erff alone about 62, its gradient (y / x and em_expf) about 55 more (AMD EPYC, AVX2: the
 * forward keeping the gradient 0.70 ms per 512K floats, against 0.73 + 0.86-0.90 for the two
 * loops of session 26, benchmarks/bench_gelu_loops.py). */
EM_INLINE float em_normal_cdff_pdf(float x, float* pdf) {
    float a = fabsf(x), h = a * a, l = fmaf(a, a, -h);
    const float shift = 12582912.0f;                      /* 1.5 * 2^23: n in v's low mantissa bits */
    float v = fmaf(h, -0.72134752044448170f, shift), n = v - shift;
    float r = fmaf(n, -0.693359375f, -0.5f * h);
    r = fmaf(-0.5f, l, fmaf(n, 2.12194440e-4f, r));
    float r2 = r * r, r4 = r2 * r2;
    float p = fmaf(fmaf(1.9875691500e-4f, r, 1.3981999507e-3f), r4,
                   fmaf(fmaf(8.3334519073e-3f, r, 4.1665795894e-2f), r2, fmaf(1.6666665459e-1f, r, 5.0000001201e-1f)));
    float e = (fmaf(p, r2, r) + 1.0f) * em_bits_to_f((em_f_to_bits(v) + 127) << 23);
    e = a > 13.2f ? 0.0f : e;                             /* also what a > 13.2 left in v, l: inf, NaN */
    float d = fmaf(0.3f, a, 1.0f), dl = fmaf(0.3f, a, 1.0f - d);  /* 1 + 0.3 a = d + dl */
    float u = 1.0f / d, q = fmaf(2.925789915e-03f, u, -3.809785843e-02f);
    q = fmaf(q, u, 1.582487673e-01f); q = fmaf(q, u, -2.975137234e-01f); q = fmaf(q, u, 2.586329281e-01f);
    q = fmaf(q, u, -1.223038360e-01f); q = fmaf(q, u, 1.146434769e-01f); q = fmaf(q, u, 7.311045378e-02f);
    q = fmaf(q, u, 1.111894920e-01f); q = fmaf(q, u, 1.194734201e-01f); q = fmaf(q, u, 1.196910888e-01f) * u;
    /* u's roundings (of d and of 1 / d: eps = 1 - (d + dl) u, exact but for dl's own) moved Q
     * by Q (dlnQ / dlnu) eps, dlnQ / dlnu = 0.842 + 1.832 u within 3% (2.7 at a = 0, where they
     * were 5 of the 7 ulp Phi had without this) */
    float eps = fmaf(-dl, u, fmaf(-d, u, 1.0f));
    q = fmaf(q * fmaf(1.832367301f, u, 0.8422149420f), eps, q);
    float lower = a > 13.2f ? 0.0f : e * q;               /* Phi(-a); (a = inf made eps NaN) */
    *pdf = e * 0.398942280401432678f;
    return x < 0.0f ? lower : 1.0f - lower;
}
/* GELU's Phi(x) alone, and its gradient Phi(x) + x phi(x): a loop computing both (a compiled
 * step's forward keeps the gradient for its backward) shares their work (the C compiler merges
 * the identical inlined operations). */
EM_INLINE float em_normal_cdff(float x) { float pdf; return em_normal_cdff_pdf(x, &pdf); }
EM_INLINE float em_gelu_gradf(float x) { float pdf, cdf = em_normal_cdff_pdf(x, &pdf); return cdf + x * pdf; }

/* expm1(x): below |x| = 1 the Taylor series x + x^2 p(x) (to x^12 in float, x^19 in double: the
 * next term is below 2^-28 or 2^-57 of the sum), where exp(x) - 1 would cancel; exp(x) - 1
 * above (at most 1.6 times exp's relative error there). log1p(x) = log(u) * (x / (u - 1)),
 * u = 1 + x: Kahan's formula (D. Goldberg, "What every computer scientist should know about
 * floating-point arithmetic", 1991, Theorem 4): the rounding error of u cancels between u - 1
 * and log(u). Selects keep -0.0, the limits (-1 and inf; inf) and NaN. */
EM_INLINE float em_expm1f(float x) {
    float p = (float)(1.0 / 479001600.0); p = fmaf(p, x, (1.0 / 39916800.0)); p = fmaf(p, x, (1.0 / 3628800.0));
    p = fmaf(p, x, (1.0 / 362880.0)); p = fmaf(p, x, (1.0 / 40320.0)); p = fmaf(p, x, (1.0 / 5040.0));
    p = fmaf(p, x, (1.0 / 720.0)); p = fmaf(p, x, (1.0 / 120.0)); p = fmaf(p, x, (1.0 / 24.0));
    p = fmaf(p, x, (1.0 / 6.0)); p = fmaf(p, x, (1.0 / 2.0));
    float y = fabsf(x) < 1.0f ? fmaf(p * x, x, x) : em_expf(x) - 1.0f;
    return x != x || x == 0.0f ? x : y;  /* -0.0 too: the fma would give +0.0 */
}

EM_INLINE double em_expm1(double x) {
    double p = (double)(1.0 / 121645100408832000.0); p = fma(p, x, (1.0 / 6402373705728000.0)); p = fma(p, x, (1.0 / 355687428096000.0));
    p = fma(p, x, (1.0 / 20922789888000.0)); p = fma(p, x, (1.0 / 1307674368000.0)); p = fma(p, x, (1.0 / 87178291200.0));
    p = fma(p, x, (1.0 / 6227020800.0)); p = fma(p, x, (1.0 / 479001600.0)); p = fma(p, x, (1.0 / 39916800.0));
    p = fma(p, x, (1.0 / 3628800.0)); p = fma(p, x, (1.0 / 362880.0)); p = fma(p, x, (1.0 / 40320.0));
    p = fma(p, x, (1.0 / 5040.0)); p = fma(p, x, (1.0 / 720.0)); p = fma(p, x, (1.0 / 120.0));
    p = fma(p, x, (1.0 / 24.0)); p = fma(p, x, (1.0 / 6.0)); p = fma(p, x, (1.0 / 2.0));
    double y = fabs(x) < 1.0 ? fma(p * x, x, x) : em_exp(x) - 1.0;
    return x != x || x == 0.0 ? x : y;
}

#define EM_LOG1P(T, SUF) \
    EM_INLINE T em_log1p##SUF(T x) { \
        T u = (T)1 + x, um = u - (T)1; \
        T y = em_log##SUF(u) * (x / um); \
        y = um == (T)0 ? x : y; \
        y = x == (T)INFINITY ? x : y; \
        return x != x ? x : y; \
    }
EM_LOG1P(float, f)
EM_LOG1P(double, )

/* sinh and cosh of a = |x| from one exp: e2 = exp(a/2), e^a = e2 e2; sinh as the odd Taylor
 * series to a^17 below a = 1/2 (where (e - 1/e)/2 would cancel; the next term is below 2^-60
 * of the sum), (e - 1/e)/2 above; beyond a = 20 (where e^-a is below 2^-57 of e^a) as
 * (e2/2) e2, so that results up to the largest finite one do not overflow in between. */
#define EM_HYPERBOLIC(T, SUF) \
    EM_INLINE T em_sinh##SUF(T x) { \
        T a = fabs##SUF(x), z = a * a, e2 = em_exp##SUF(a * (T)0.5), e = e2 * e2; \
        T p = (T)(1.0 / 51090942171709440000.0); \
        p = fma##SUF(p, z, (T)(1.0 / 121645100408832000.0)); p = fma##SUF(p, z, (T)(1.0 / 355687428096000.0)); \
        p = fma##SUF(p, z, (T)(1.0 / 1307674368000.0)); p = fma##SUF(p, z, (T)(1.0 / 6227020800.0)); \
        p = fma##SUF(p, z, (T)(1.0 / 39916800.0)); p = fma##SUF(p, z, (T)(1.0 / 362880.0)); \
        p = fma##SUF(p, z, (T)(1.0 / 5040.0)); p = fma##SUF(p, z, (T)(1.0 / 120.0)); \
        p = fma##SUF(p, z, (T)(1.0 / 6.0)); \
        T y = a < (T)1 ? fma##SUF(p * z, a, a) : (T)0.5 * e - (T)0.5 / e; \
        y = a > (T)20 ? ((T)0.5 * e2) * e2 : y; \
        return copysign##SUF(y, x); \
    } \
    EM_INLINE T em_cosh##SUF(T x) { \
        T a = fabs##SUF(x), e2 = em_exp##SUF(a * (T)0.5), e = e2 * e2; \
        return a > (T)20 ? ((T)0.5 * e2) * e2 : (T)0.5 * e + (T)0.5 / e; \
    }
EM_HYPERBOLIC(float, f)
EM_HYPERBOLIC(double, )

/* The inverse hyperbolic functions of a = |x| through log1p, x's sign given after (so -0.0
 * stays): atanh = log1p(2a / (1 - a)) / 2; asinh = log1p(a + a^2 / (1 + sqrt(1 + a^2))) and
 * acosh(x) = log1p(t + sqrt(t (t + 2))), t = x - 1 (no cancellation near 0 and 1); beyond
 * 2^28, where a^2 would overflow, log(a) + ln 2 (the dropped 1/(4a^2) is below 2^-58). */
#define EM_INVERSE_HYPERBOLIC(T, SUF) \
    EM_INLINE T em_atanh##SUF(T x) { \
        T a = fabs##SUF(x); \
        return copysign##SUF((T)0.5 * em_log1p##SUF(((T)2 * a) / ((T)1 - a)), x); \
    } \
    EM_INLINE T em_asinh##SUF(T x) { \
        T a = fabs##SUF(x), z = a * a; \
        T y = a > (T)0x1p28 ? em_log##SUF(a) + (T)0.6931471805599453 \
                            : em_log1p##SUF(a + z / ((T)1 + sqrt##SUF((T)1 + z))); \
        return copysign##SUF(y, x); \
    } \
    EM_INLINE T em_acosh##SUF(T x) { \
        T t = x - (T)1; \
        return x > (T)0x1p28 ? em_log##SUF(x) + (T)0.6931471805599453 \
                             : em_log1p##SUF(t + sqrt##SUF(t * (t + (T)2))); \
    }
EM_INVERSE_HYPERBOLIC(float, f)
EM_INVERSE_HYPERBOLIC(double, )

/* float atan, asin and acos: Cephes's single-precision minimax polynomials (S. L. Moshier,
 * "Methods and Programs for Mathematical Functions", 1989) on reduced arguments, chosen by
 * selects (one division, one sqrt), all in float, pi/2 (pi/4, pi) added as a float and its
 * rounding error (hi + lo). (Evaluated in double they are 0.6 ulp, but 2.3x slower than
 * NumPy's AVX-512 float loops on an Intel Xeon; in float, asin is as fast, atan 1.5x.)
 * atan: |x| > tan(3pi/8) reads -1/|x| and adds pi/2, |x| > tan(pi/8)
 * reads (|x| - 1)/(|x| + 1) and adds pi/4. asin: |x| > 1/2 reads sqrt((1 - |x|)/2) = s and
 * gives pi/2 - 2 asin(s); acos: pi/2 - asin(x) inside [-1/2, 1/2], 2 asin(s) and pi - 2 asin(s)
 * outside. Signs given after (-0.0 stays), NaN outside [-1, 1] and for NaN. Error bounds over
 * all 2^32 float32 bit patterns against NumPy's float64 (measured once: atan 2.30, asin 2.36,
 * acos 1.12 ulp, NaN and zero signs all as the reference): atan 3 ulp, asin 3 ulp, acos 2 ulp
 * (tests/compiler/test_codegen_math.py checks every 509th pattern).
 * Double: libm's (scalar). */
#define EM_PIO2F_HI 1.57079637050628662109375f   /* pi/2 rounded to float */
#define EM_PIO2F_LO -4.37113900018624283e-8f      /* pi/2 - EM_PIO2F_HI */
EM_INLINE float em_asin_poly(float u, float z) {  /* asin(u) for |u| <= 1/2, z = u*u */
    float p = fmaf(fmaf(fmaf(fmaf(4.2163199048e-2f, z, 2.4181311049e-2f), z, 4.5470025998e-2f), z,
                        7.4953002686e-2f), z, 1.6666752422e-1f);
    return fmaf(p * z, u, u);
}
EM_INLINE float em_atanf(float x) {
    float a = fabsf(x);
    int big = a > 2.414213562373095f, mid = a > 0.4142135623730950f;
    float t = (big ? -1.0f : (mid ? a - 1.0f : a)) / (big ? a : (mid ? a + 1.0f : 1.0f)), z = t * t;
    float p = fmaf(fmaf(fmaf(8.05374449538e-2f, z, -1.38776856032e-1f), z, 1.99777106478e-1f), z,
                   -3.33329491539e-1f);
    float hi = big ? EM_PIO2F_HI : (mid ? 0.5f * EM_PIO2F_HI : 0.0f);
    float lo = big ? EM_PIO2F_LO : (mid ? 0.5f * EM_PIO2F_LO : 0.0f);
    float y = hi + (fmaf(p * z, t, t) + lo);
    return x != x ? x : copysignf(y, x);
}
EM_INLINE float em_asinf(float x) {
    float a = fabsf(x);
    int outer = a > 0.5f;
    float z = outer ? 0.5f * (1.0f - a) : a * a, u = outer ? sqrtf(z) : a;
    float c = em_asin_poly(u, z);
    float y = outer ? EM_PIO2F_HI - (2.0f * c - EM_PIO2F_LO) : c;
    y = a > 1.0f ? NAN : y;
    return x != x ? x : copysignf(y, x);
}
EM_INLINE float em_acosf(float x) {
    float a = fabsf(x);
    int outer = a > 0.5f;
    float z = outer ? 0.5f * (1.0f - a) : a * a, u = outer ? sqrtf(z) : x;
    float c = em_asin_poly(u, z);
    float y = outer ? (x > 0.0f ? 2.0f * c : 2.0f * EM_PIO2F_HI - (2.0f * c - 2.0f * EM_PIO2F_LO))
                    : EM_PIO2F_HI - (c - EM_PIO2F_LO);
    y = a > 1.0f ? NAN : y;
    return x != x ? x : y;
}
EM_INLINE double em_atan(double x) { return atan(x); }
EM_INLINE double em_asin(double x) { return asin(x); }
EM_INLINE double em_acos(double x) { return acos(x); }

/* float tan, in double arithmetic: x = n pi/2 + r with |r| <= pi/4, then tan(r) by Cephes's
 * rational function (double tan.c, |error| < 1e-16 relative) and tan(x) = tan(r) for even n,
 * -1/tan(r) for odd n, rounded once to float. The reduction is exact enough for every float32:
 * below 2^23, Cody-Waite with pi/2 in three parts (29 + 25 bits, whose products with n < 2^23
 * are exact, and the rest); from 2^23 up (x = m 2^k, m < 2^24, k <= 104) Payne-Hanek: x 2/pi
 * mod 2 is m times the 96 bits of 2/pi that follow bit k (four 24-bit pieces, each cut from 48
 * bits of 2/pi by one scaling), summed in doubles as four exact 48-bit
 * products. Both are computed and one selected (no branches, no table: the loop vectorises).
 * Error bound over every 509th
 * float32 bit pattern against NumPy's float64 (tests/compiler/test_codegen_math.py): 1 ulp
 * (measured 0.50); NaN for +-inf and NaN, -0.0 kept. Double: libm's (scalar).
 * It is the exact fallback of compiled graphs' tan: 3-5 ns an element (Intel Xeon, AVX-512),
 * ~10x NumPy's SVML tanf; em_tanf_near below is the fast one. */
EM_INLINE double em_two_over_pi_bits(int32_t w, double scale) {  /* 24 bits of 2/pi, 0 <= w <= 8 */
    /* 48 bits of 2/pi from bit 24w - 23 (bit 0: the units), picked by selects on the bits of
     * w (a table read would be a gather, several times slower than these blends) */
    int odd = w & 1, two = w & 2, four = w & 4;
    double p01 = odd ? 0xA2F9836E4E44p0 : 0x000000A2F983p0, p23 = odd ? 0x1529FC2757D1p0 : 0x6E4E441529FCp0;
    double p45 = odd ? 0xF534DDC0DB62p0 : 0x2757D1F534DDp0, p67 = odd ? 0x95993C439041p0 : 0xC0DB6295993Cp0;
    double p03 = two ? p23 : p01, p47 = two ? p67 : p45;
    double pair = w & 8 ? 0x439041FE5163p0 : (four ? p47 : p03);
    double v = floor(pair * scale);  /* exact */
    return v - 0x1p24 * floor(v * 0x1p-24);
}
EM_INLINE float em_tanf(float x) {
    int32_t bits = em_f_to_bits(x);
    float a = fabsf(x);
    double ad = (double)a;
    /* below 2^23: n = rint(a 2/pi), r = a - n pi/2 */
    double n = rint(ad * 0.63661977236758134);
    double r = fma(-n, 0x1.921fb54p+0, ad);
    r = fma(-n, 0x1.10b461p-30, r);
    r = fma(-n, 0x1.a62633145c06ep-58, r);
    /* from 2^23: a = m 2^k; (m 2^k 2/pi) mod 2 from the bits of 2/pi after bit k */
    int32_t e = (em_f_to_bits(a) >> 23) - 150;
    int32_t k = e < 0 ? 0 : (e > 105 ? 105 : e);
    int32_t w = ((k + 23) * 2731) >> 16, sh = k + 23 - 24 * w;  /* (k + 23) / 24 and its remainder */
    double scale = em_bits_to_d((int64_t)(1023 + sh - 24) << 52);  /* 2^(sh - 24) */
    double m = (double)((em_f_to_bits(a) & 0x7FFFFF) | 0x800000);
    double t0 = m * em_two_over_pi_bits(w, scale) * 0x1p-23;
    double s = t0 - 2.0 * floor(t0 * 0.5) + m * em_two_over_pi_bits(w + 1, scale) * 0x1p-47;
    s -= 2.0 * floor(s * 0.5);
    double nb = rint(s);
    double f = (s - nb) + m * em_two_over_pi_bits(w + 2, scale) * 0x1p-71
                        + m * em_two_over_pi_bits(w + 3, scale) * 0x1p-95;
    int big = a >= 0x1p23f;
    r = big ? f * 1.5707963267948966 : r;
    n = big ? nb : n;
    double z = r * r;
    double p = fma(fma(-1.30936939181383777646e4, z, 1.15351664838587416140e6), z, -1.79565251976484877988e7);
    double q = fma(fma(fma(z + 1.36812963470692954678e4, z, -1.32089234440210967447e6), z,
                       2.50083801823357915839e7), z, -5.38695755929454629881e7);
    double t = fma(r * z, p, r * q);  /* tan(r) = t / q */
    int odd = n - 2.0 * floor(n * 0.5) != 0.0;
    float y = (float)((odd ? -q : t) / (odd ? t : q));
    y = bits < 0 ? -y : y;
    return a != a || a == INFINITY ? NAN : y;
}
EM_INLINE double em_tan(double x) { return tan(x); }

/* float tan for |x| < EM_TANF_NEAR = 4096, all in float: n = rint(x 2/pi) (< 2^12), r = x - n pi/2
 * with pi/2 in four parts (12, 12, 12 and 24 bits: n times each of the first three is exact,
 * and so is each difference, Cody and Waite's reduction; the fourth rounds once, the rest of
 * pi/2, 8e-20, is below 2^-50 of r), then Cephes's single-precision tanf polynomial
 * (S. L. Moshier, 1989) for tan(r), |r| <= pi/4 (+4e-4 where rint rounds x 2/pi the other way),
 * and -1/tan(r) for odd n; x's sign given after (-0.0 stays), NaN for NaN. Error bound over
 * every float32 below 4096 against NumPy's float64 (measured 3.41 ulp; tests/compiler/
 * test_codegen_math.py sweeps every 7th): 4 ulp. 0.28 ns an element (Intel Xeon, AVX-512,
 * one thread), NumPy's SVML tanf 0.36. Beyond 4096 (and for +-inf) the result is wrong: the
 * code generator (cgen._loop_kernel) calls it only in a loop whose arguments it has checked
 * are all below, and em_tanf otherwise. */
#define EM_TANF_NEAR 0x1p12f
EM_INLINE float em_pio2f_rest(float a, float n) {  /* a - n pi/2, the reduction above */
    float r = fmaf(-n, 0x1.92p+0f, a);
    r = fmaf(-n, 0x1.fb4p-12f, r);
    r = fmaf(-n, 0x1.444p-24f, r);
    return fmaf(-n, 0x1.68c234p-39f, r);
}
EM_INLINE float em_tanf_near(float x) {
    float a = fabsf(x);
    float n = rintf(a * 0.636619772367581f);
    float r = em_pio2f_rest(a, n);
    float z = r * r;
    float p = fmaf(fmaf(fmaf(fmaf(fmaf(9.38540185543e-3f, z, 3.11992232697e-3f), z, 2.44301354525e-2f), z,
                             5.34112807005e-2f), z, 1.33387994085e-1f), z, 3.33331568548e-1f);
    float t = fmaf(p * z, r, r);
    float y = n - 2.0f * floorf(n * 0.5f) != 0.0f ? -1.0f / t : t;  /* odd n: -cot(r) */
    return em_f_to_bits(x) < 0 ? -y : y;
}

/* float sin and cos for |x| < EM_TANF_NEAR, all in float: em_tanf_near's reduction of |x| to
 * r = |x| - n pi/2, then Cephes's single-precision sinf and cosf polynomials (S. L. Moshier, 1989)
 * for sin(r) and cos(r), picked and signed by n mod 4 (sin odd in x: x's sign given after, -0.0
 * stays; cos even), NaN for NaN. Error bound over every 97th float32 below 4096 and the floats
 * nearest each multiple of pi/2 below it (where the reduction cancels most), against NumPy's
 * float64 (tests/compiler/test_newbie20_programs.py): 2 ulp (measured 1.85 sin, 1.87 cos). The code
 * generator calls them as it calls em_tanf_near (cgen._loop_kernel): after a pass finding every
 * argument below EM_TANF_NEAR, and libm's sinf and cosf (em_sinf, em_cosf: scalar, exact to
 * 1 ulp for every float) otherwise. Double: libm's. */
EM_INLINE float em_sincosf_near(float x, int cosine) {
    float a = fabsf(x);
    float n = rintf(a * 0.636619772367581f);
    float r = em_pio2f_rest(a, n);
    float z = r * r;
    float s = fmaf(fmaf(fmaf(-1.9515295891e-4f, z, 8.3321608736e-3f), z, -1.6666654611e-1f) * z, r, r);
    float c = fmaf(fmaf(fmaf(fmaf(2.443315711809948e-5f, z, -1.388731625493765e-3f), z,
                             4.166664568298827e-2f), z, -0.5f), z, 1.0f);
    float q = n - 4.0f * floorf(n * 0.25f) + (cosine ? 1.0f : 0.0f);  /* cos(a) = sin(a + pi/2) */
    q = q >= 4.0f ? q - 4.0f : q;
    float y = q == 0.0f ? s : (q == 1.0f ? c : (q == 2.0f ? -s : -c));
    return !cosine && em_f_to_bits(x) < 0 ? -y : y;
}
EM_INLINE float em_sinf_near(float x) { return em_sincosf_near(x, 0); }
EM_INLINE float em_cosf_near(float x) { return em_sincosf_near(x, 1); }
EM_INLINE float em_sinf(float x) { return sinf(x); }
EM_INLINE float em_cosf(float x) { return cosf(x); }

#endif
