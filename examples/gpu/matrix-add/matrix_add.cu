// Matrix addition C = A + B on the GPU, checked against the same sum on the CPU.
// Usage: ./app [N]   (N x N matrices of floats, default 1024)
// Prints the check ("check: PASSED, max abs error ...") and writes result.txt.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cuda_runtime.h>

#define CUDA_CHECK(call)                                                              \
    do {                                                                              \
        cudaError_t err_ = (call);                                                    \
        if (err_ != cudaSuccess) {                                                    \
            fprintf(stderr, "CUDA error: %s (%s) at %s:%d\n", cudaGetErrorName(err_), \
                    cudaGetErrorString(err_), __FILE__, __LINE__);                    \
            return 1;                                                                 \
        }                                                                             \
    } while (0)

__global__ void matrix_add(const float *a, const float *b, float *c, int n) {
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < n && col < n) {
        c[row * n + col] = a[row * n + col] + b[row * n + col];
    }
}

int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 1024;
    if (n <= 0) {
        fprintf(stderr, "usage: %s [N>0]\n", argv[0]);
        return 2;
    }
    size_t count = (size_t)n * n, bytes = count * sizeof(float);
    std::vector<float> a(count), b(count), c(count), expected(count);
    for (size_t i = 0; i < count; i++) {
        a[i] = (float)(i % 1000) * 0.5f;
        b[i] = (float)((i * 7) % 1000) * 0.25f;
        expected[i] = a[i] + b[i];
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

    dim3 block(16, 16);
    dim3 grid((n + block.x - 1) / block.x, (n + block.y - 1) / block.y);
    cudaEvent_t start, stop;
    CUDA_CHECK(cudaEventCreate(&start));
    CUDA_CHECK(cudaEventCreate(&stop));
    CUDA_CHECK(cudaEventRecord(start));
    matrix_add<<<grid, block>>>(da, db, dc, n);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaEventRecord(stop));
    CUDA_CHECK(cudaEventSynchronize(stop));
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    CUDA_CHECK(cudaMemcpy(c.data(), dc, bytes, cudaMemcpyDeviceToHost));

    double max_err = 0;
    for (size_t i = 0; i < count; i++) {
        max_err = fmax(max_err, fabs((double)c[i] - (double)expected[i]));
    }
    bool ok = max_err == 0.0;
    printf("matrix add %dx%d: kernel %.3f ms\n", n, n, ms);
    printf("check: %s, max abs error %g against the CPU sum\n", ok ? "PASSED" : "FAILED", max_err);
    FILE *f = fopen("result.txt", "w");
    if (f) {
        fprintf(f, "n=%d kernel_ms=%.3f max_abs_error=%g check=%s\n", n, ms, max_err, ok ? "PASSED" : "FAILED");
        fprintf(f, "c[0]=%g c[last]=%g\n", c[0], c[count - 1]);
        fclose(f);
    }
    cudaFree(da);
    cudaFree(db);
    cudaFree(dc);
    return ok ? 0 : 1;
}
