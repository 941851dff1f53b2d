/* A STREAM-style Copy reference for benchmarks/hardware_speed.py (McCalpin's STREAM rules: arrays several
 * times the last-level cache, initialised by the threads that later copy them, the first timing dropped, the
 * best of the rest reported, 2 x bytes copied counted as moved).
 *
 *   stream_copy KERNEL BYTES_PER_THREAD TIMES [PAGES]      (thread count: OMP_NUM_THREADS)
 *
 * KERNEL "memcpy": each thread copies its own chunk with the C library's memcpy, the same routine
 * ctypes.memmove reaches, so the two measure the same copy and differ only in how they drive it.
 * KERNEL "loop": STREAM's own `c[j] = a[j]` loop as the compiler builds it (plain stores: the destination's
 * cache lines are read before they are written, which STREAM does not count).
 * PAGES "huge" (the default) advises transparent huge pages on the arrays (madvise(MADV_HUGEPAGE)), as
 * gpu-doctor does on its own; "small" leaves them to malloc, which on a kernel whose THP mode is "madvise"
 * (Debian's and Ubuntu's default) means 4 KiB pages and, in a VM, a nested page walk every 4 KiB.
 * Prints one line: "Copy: <MB/s>" with MB = 10^6 bytes.
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

static double *array(long bytes, int huge) {
    void *p = NULL;
    if (!huge) return malloc(bytes);
    if (posix_memalign(&p, 2L << 20, bytes) != 0) return NULL;
    madvise(p, bytes, MADV_HUGEPAGE); /* advice: a kernel without THP keeps small pages */
    return p;
}

int main(int argc, char **argv) {
    if (argc != 4 && argc != 5) {
        fprintf(stderr, "usage: %s memcpy|loop BYTES_PER_THREAD TIMES [huge|small]\n", argv[0]);
        return 2;
    }
    int huge = argc < 5 || strcmp(argv[4], "small") != 0;
    int use_memcpy = strcmp(argv[1], "memcpy") == 0;
    long per_thread = atol(argv[2]) / (long)sizeof(double);
    int times = atoi(argv[3]);
    int threads = omp_get_max_threads();
    long n = per_thread * threads;
    double *a = array(n * sizeof(double), huge), *c = array(n * sizeof(double), huge);
    if (a == NULL || c == NULL || per_thread <= 0 || times < 2) return 2;
#pragma omp parallel for schedule(static)
    for (long j = 0; j < n; j++) {
        a[j] = 1.0;
        c[j] = 0.0;
    }
    double best = 1e30;
    for (int k = 0; k < times; k++) {
        double t = omp_get_wtime();
        if (use_memcpy) {
#pragma omp parallel
            {
                long first = per_thread * omp_get_thread_num();
                memcpy(c + first, a + first, per_thread * sizeof(double));
            }
        } else {
#pragma omp parallel for schedule(static)
            for (long j = 0; j < n; j++) c[j] = a[j];
        }
        t = omp_get_wtime() - t;
        if (k > 0 && t < best) best = t;
    }
    if (c[n - 1] != 1.0) return 3;
    printf("Copy: %.1f\n", 2.0 * sizeof(double) * n / best / 1e6);
    return 0;
}
