// Matrix multiplication C = A x B on the GPU (shared-memory tiles), checked against a CPU
// multiplication of the same matrices.
// Usage: ./app [N]   (N x N matrices of floats, default 512)
// Prints the check ("check: PASSED, max relative error ...") and writes result.txt.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cuda_runtime.h>

#define TILE 16
#define CUDA_CHECK(call)                                                              \
    do {                                                                              \
        cudaError_t err_ = (call);                                                    \
        if (err_ != cudaSuccess) {                                                    \
            fprintf(stderr, "CUDA error: %s (%s) at %s:%d\n", cudaGetErrorName(err_), \
                    cudaGetErrorString(err_), __FILE__, __LINE__);                    \
            return 1;                                                                 \
        }                                                                             \
    } while (0)

__global__ void matrix_multiply(const float *a, const float *b, float *c, int n) {
    __shared__ float ta[TILE][TILE];
    __shared__ float tb[TILE][TILE];
    int row = blockIdx.y * TILE + threadIdx.y;
    int col = blockIdx.x * TILE + threadIdx.x;
    float sum = 0.0f;
    for (int t = 0; t < (n + TILE - 1) / TILE; t++) {
        int ac = t * TILE + threadIdx.x, br = t * TILE + threadIdx.y;
        ta[threadIdx.y][threadIdx.x] = (row < n && ac < n) ? a[row * n + ac] : 0.0f;
        tb[threadIdx.y][threadIdx.x] = (br < n && col < n) ? b[br * n + col] : 0.0f;
        __syncthreads();
        for (int k = 0; k < TILE; k++) {
            sum += ta[threadIdx.y][k] * tb[k][threadIdx.x];
        }
        __syncthreads();
    }
    if (row < n && col < n) {
        c[row * n + col] = sum;
    }
}

int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 512;
    if (n <= 0) {
        fprintf(stderr, "usage: %s [N>0]\n", argv[0]);
        return 2;
    }
    size_t count = (size_t)n * n, bytes = count * sizeof(float);
    std::vector<float> a(count), b(count), c(count);
    for (size_t i = 0; i < count; i++) {
        a[i] = (float)((i * 13) % 17) / 17.0f;
        b[i] = (float)((i * 7) % 23) / 23.0f;
    }

    int devices = 0;
    CUDA_CHECK(cudaGetDeviceCount(&devices));
    cudaDeviceProp prop;
    CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
    printf("device: %s (%d device(s))\n", prop.name, devices);

    float *da, *db, *dc;
    CUDA_CHECK(cudaMalloc(&da, bytes));
    CUDA_CHECK(cudaMalloc(&db, bytes));
    CUDA_CHECK(cudaMalloc(&dc, bytes));
    CUDA_CHECK(cudaMemcpy(da, a.data(), bytes, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(db, b.data(), bytes, cudaMemcpyHostToDevice));

    dim3 block(TILE, TILE);
    dim3 grid((n + TILE - 1) / TILE, (n + TILE - 1) / TILE);
    cudaEvent_t start, stop;
    CUDA_CHECK(cudaEventCreate(&start));
    CUDA_CHECK(cudaEventCreate(&stop));
    CUDA_CHECK(cudaEventRecord(start));
    matrix_multiply<<<grid, block>>>(da, db, dc, n);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaEventRecord(stop));
    CUDA_CHECK(cudaEventSynchronize(stop));
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    CUDA_CHECK(cudaMemcpy(c.data(), dc, bytes, cudaMemcpyDeviceToHost));

    // The same product on the CPU (double accumulation), compared element by element.
    double max_rel = 0;
    std::vector<double> row(n);
    for (int i = 0; i < n; i++) {
        for (int j = 0; j < n; j++) row[j] = 0.0;
        for (int k = 0; k < n; k++) {
            double aik = a[(size_t)i * n + k];
            for (int j = 0; j < n; j++) row[j] += aik * b[(size_t)k * n + j];
        }
        for (int j = 0; j < n; j++) {
            double got = c[(size_t)i * n + j];
            double rel = fabs(got - row[j]) / fmax(fabs(row[j]), 1e-6);
            max_rel = fmax(max_rel, rel);
        }
    }
    bool ok = max_rel < 1e-4;
    double gflops = 2.0 * n * (double)n * n / (ms * 1e6);
    printf("matrix multiply %dx%d: kernel %.3f ms (%.1f GFLOP/s)\n", n, n, ms, gflops);
    printf("check: %s, max relative error %.3g against the CPU product\n", ok ? "PASSED" : "FAILED", max_rel);
    FILE *f = fopen("result.txt", "w");
    if (f) {
        fprintf(f, "n=%d kernel_ms=%.3f gflops=%.1f max_rel_error=%.3g check=%s\n", n, ms, gflops, max_rel,
                ok ? "PASSED" : "FAILED");
        fprintf(f, "c[0]=%g c[last]=%g\n", c[0], c[count - 1]);
        fclose(f);
    }
    cudaFree(da);
    cudaFree(db);
    cudaFree(dc);
    return ok ? 0 : 1;
}
