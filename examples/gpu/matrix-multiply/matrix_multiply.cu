// Matrix multiplication C = A x B on the GPU (shared-memory tiles), timed warm, checked against a
// CPU multiplication of the same matrices.
// Usage: ./app [N] [RUNS]   (N x N matrices of floats, default 512; RUNS timed launches, default 20)
// The kernel is launched WARMUP times untimed (the first launch also loads the module), then
// RUNS times, each between two cudaEvents; the median launch is reported with its GFLOP/s
// (2 x N^3 floating-point operations), next to an estimate of the device's fp32 peak and its
// peak memory bandwidth.
// Prints the check ("check: PASSED, max relative error ...") and writes result.txt.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cuda_runtime.h>

#define TILE 16
#define WARMUP 3
#define CUDA_CHECK(call)                                                              \
    do {                                                                              \
        cudaError_t err_ = (call);                                                    \
        if (err_ != cudaSuccess) {                                                    \
            fprintf(stderr, "CUDA error: %s (%s) at %s:%d\n", cudaGetErrorName(err_), \
                    cudaGetErrorString(err_), __FILE__, __LINE__);                    \
            return 1;                                                                 \
        }                                                                             \
    } while (0)

// FP32 cores per SM by compute capability (the table of NVIDIA's cuda-samples helper_cuda.h);
// 0 when this program does not know the architecture.
static int fp32_cores_per_sm(int major, int minor) {
    switch (major) {
    case 3: return 192;
    case 5: return 128;
    case 6: return minor == 0 ? 64 : 128;
    case 7: return 64;
    case 8: return minor == 0 ? 64 : 128;
    case 9: case 10: case 11: case 12: return 128;
    default: return 0;
    }
}

// The device's peaks, from its attributes (cudaDeviceGetAttribute: CUDA 13 removed the clock
// fields of cudaDeviceProp).  0 means unknown.
struct Peaks {
    int sms, cores_per_sm, clock_khz, memory_clock_khz, bus_bits;
    double bytes_per_s;  // 2 (double data rate) x memory clock x bus width in bytes
    double fp32_flops;   // ESTIMATE: SMs x FP32 cores per SM x 2 (an FMA) x peak clock
};

static cudaError_t device_peaks(int device, Peaks *p) {
    cudaDeviceProp prop;
    cudaError_t err = cudaGetDeviceProperties(&prop, device);
    if (err == cudaSuccess) err = cudaDeviceGetAttribute(&p->clock_khz, cudaDevAttrClockRate, device);
    if (err == cudaSuccess) err = cudaDeviceGetAttribute(&p->memory_clock_khz, cudaDevAttrMemoryClockRate, device);
    if (err != cudaSuccess) return err;
    p->sms = prop.multiProcessorCount;
    p->bus_bits = prop.memoryBusWidth;
    p->cores_per_sm = fp32_cores_per_sm(prop.major, prop.minor);
    p->bytes_per_s = 2.0 * p->memory_clock_khz * 1000.0 * (p->bus_bits / 8.0);
    p->fp32_flops = (double)p->sms * p->cores_per_sm * 2.0 * p->clock_khz * 1000.0;
    return cudaSuccess;
}

static void print_peaks(const Peaks &p) {
    if (p.bytes_per_s > 0) {
        printf("peak memory bandwidth: %.1f GB/s (2 x %d MHz memory clock x %d-bit bus)\n", p.bytes_per_s / 1e9,
               p.memory_clock_khz / 1000, p.bus_bits);
    } else {
        printf("peak memory bandwidth: unknown (the device reports no memory clock)\n");
    }
    if (p.fp32_flops > 0) {
        printf("peak fp32 (estimate): %.1f GFLOP/s (%d SMs x %d FP32 cores x 2 FLOP per FMA x %d MHz)\n",
               p.fp32_flops / 1e9, p.sms, p.cores_per_sm, p.clock_khz / 1000);
    } else {
        printf("peak fp32 (estimate): unknown for this compute capability\n");
    }
}

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
    int runs = argc > 2 ? atoi(argv[2]) : 20;
    if (n <= 0 || runs <= 0) {
        fprintf(stderr, "usage: %s [N>0] [RUNS>0]\n", argv[0]);
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
    Peaks peaks;
    CUDA_CHECK(device_peaks(0, &peaks));
    printf("device: %s (%d device(s)), compute capability %d.%d, %d SMs\n", prop.name, devices, prop.major,
           prop.minor, prop.multiProcessorCount);

    float *da, *db, *dc;
    CUDA_CHECK(cudaMalloc(&da, bytes));
    CUDA_CHECK(cudaMalloc(&db, bytes));
    CUDA_CHECK(cudaMalloc(&dc, bytes));
    CUDA_CHECK(cudaMemcpy(da, a.data(), bytes, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(db, b.data(), bytes, cudaMemcpyHostToDevice));

    dim3 block(TILE, TILE);
    dim3 grid((n + TILE - 1) / TILE, (n + TILE - 1) / TILE);
    for (int i = 0; i < WARMUP; i++) {
        matrix_multiply<<<grid, block>>>(da, db, dc, n);
    }
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());

    // One pair of events per launch, all recorded before the first is read.
    std::vector<cudaEvent_t> events(2 * (size_t)runs);
    for (cudaEvent_t &e : events) CUDA_CHECK(cudaEventCreate(&e));
    for (int i = 0; i < runs; i++) {
        CUDA_CHECK(cudaEventRecord(events[2 * i]));
        matrix_multiply<<<grid, block>>>(da, db, dc, n);
        CUDA_CHECK(cudaEventRecord(events[2 * i + 1]));
    }
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaEventSynchronize(events.back()));
    std::vector<float> times(runs);
    for (int i = 0; i < runs; i++) CUDA_CHECK(cudaEventElapsedTime(&times[i], events[2 * i], events[2 * i + 1]));
    for (cudaEvent_t e : events) cudaEventDestroy(e);
    std::sort(times.begin(), times.end());
    double ms = runs % 2 ? times[runs / 2] : (times[runs / 2 - 1] + times[runs / 2]) / 2.0;
    double gflops = 2.0 * n * (double)n * n / (ms * 1e6);  // FLOP per ms / 1e6 = GFLOP/s
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
    printf("matrix multiply %dx%d: kernel %.3f ms per launch (median of %d timed launches after %d warm-up; "
           "fastest %.3f ms)\n", n, n, ms, runs, WARMUP, times[0]);
    if (peaks.fp32_flops > 0) {
        printf("throughput: %.1f GFLOP/s (%.1f%% of the estimated fp32 peak)\n", gflops,
               100.0 * gflops * 1e9 / peaks.fp32_flops);
    } else {
        printf("throughput: %.1f GFLOP/s\n", gflops);
    }
    print_peaks(peaks);
    printf("check: %s, max relative error %.3g against the CPU product\n", ok ? "PASSED" : "FAILED", max_rel);
    FILE *f = fopen("result.txt", "w");
    if (f) {
        fprintf(f, "n=%d runs=%d kernel_ms_median=%.4f gflops=%.1f peak_fp32_gflops_estimate=%.1f "
                "max_rel_error=%.3g check=%s\n", n, runs, ms, gflops, peaks.fp32_flops / 1e9, max_rel,
                ok ? "PASSED" : "FAILED");
        fprintf(f, "c[0]=%g c[last]=%g\n", c[0], c[count - 1]);
        fclose(f);
    }
    cudaFree(da);
    cudaFree(db);
    cudaFree(dc);
    return ok ? 0 : 1;
}
