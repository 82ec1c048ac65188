/* What every translation unit of a generated library starts with (backends/cgen.py): the
 * BLAS entry points and the globals all units share, defined once by the unit holding the
 * regions (cgen._GLOBALS). */
#ifndef EMBER_GRAPH_H
#define EMBER_GRAPH_H
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "ember_math.h"
typedef void (*em_sgemm_t)(char*, char*, int*, int*, int*, float*, float*, int*, float*, int*, float*, float*, int*);
typedef void (*em_dgemm_t)(char*, char*, int*, int*, int*, double*, double*, int*, double*, int*, double*, double*, int*);
/* NumPy's BLAS (64-bit integers), when found: every product. On the CPUs measured its newer
 * OpenBLAS ran the GEMM, attention and convolution shapes 4-25% faster than SciPy's. */
typedef void (*em_sgemm64_t)(char*, char*, int64_t*, int64_t*, int64_t*, float*, const float*, int64_t*, const float*, int64_t*, float*, float*, int64_t*);
typedef void (*em_dgemm64_t)(char*, char*, int64_t*, int64_t*, int64_t*, double*, const double*, int64_t*, const double*, int64_t*, double*, double*, int64_t*);
/* Defined once (_GLOBALS), shared by every translation unit of the library; hidden: they
 * never bind to another library's. */
#define EM_SHARED extern __attribute__((visibility("hidden")))
EM_SHARED em_sgemm_t em_sgemm;
EM_SHARED em_dgemm_t em_dgemm;
EM_SHARED em_sgemm64_t em_sgemm64;
EM_SHARED em_dgemm64_t em_dgemm64;
EM_SHARED void (*em_set_threads)(int);
EM_SHARED void (*em_set_threads64)(int);
EM_SHARED int (*em_get_threads)(void);
EM_SHARED int (*em_get_threads64)(void);
EM_SHARED int em_max_threads;
extern int64_t em_bad_target, em_bad_where;  /* a refused index entry, and its dim or position */
extern int em_choice[], em_conv_choice[];
extern long em_block[];
/* Column-major C = alpha A B + beta C through NumPy's BLAS, else SciPy's. */
#define EM_GEMM_ANY(T, G64, G32) \
    static inline void G32##_any(char ta, char tb, long m, long n, long k, T alpha, const T* a, long lda, \
                                 const T* b, long ldb, T beta, T* c, long ldc) { \
        if (G64) { int64_t M = m, N = n, K = k, LA = lda, LB = ldb, LC = ldc; \
                   G64(&ta, &tb, &M, &N, &K, &alpha, a, &LA, b, &LB, &beta, c, &LC); return; } \
        int M = m, N = n, K = k, LA = lda, LB = ldb, LC = ldc; \
        G32(&ta, &tb, &M, &N, &K, &alpha, (T*)a, &LA, (T*)b, &LB, &beta, c, &LC); \
    }
EM_GEMM_ANY(float, em_sgemm64, em_sgemm)
EM_GEMM_ANY(double, em_dgemm64, em_dgemm)
/* The fused elementwise loops (cgen._loop_kernel) round every op's result as eager does: GCC's
 * default -ffp-contract=fast would fuse one op's product into the next op's sum as one fma, a
 * different number where the two terms cancel (the gradient of atan2(x, x) at x = 1e-30:
 * 7e12 for eager's 0). Clang contracts only inside one expression (each op is a statement).
 * Explicit fma (ember_math.h) and the GEMM and convolution kernels' contraction stay. */
#if defined(__GNUC__) && !defined(__clang__)
#define EM_NO_CONTRACT __attribute__((optimize("fp-contract=off")))
#else
#define EM_NO_CONTRACT
#endif
/* Products below 2^26 multiply-adds run on one BLAS thread: waking others costs more there,
 * and on a busy machine a spinning second thread can take a whole time slice. The count is
 * asked of the BLAS before each product (a load of one int), never remembered here: eager
 * products (ember._backend.matmul), other compiled graphs and threadpoolctl set the same
 * process-wide count, and a remembered one went stale. Remembered, an eager evaluation that
 * left NumPy's OpenBLAS on 2 threads ran every small product of the compiled GPT steps after
 * it on 2: the worker thread used as much CPU as the step itself, spinning between them. */
static inline void em_blas_threads(long macs) {
    int want = macs >= (1L << 26) ? em_max_threads : 1;
    if (em_set_threads && em_get_threads() != want) em_set_threads(want);
    if (em_set_threads64 && em_get_threads64() != want) em_set_threads64(want);
}
#endif
