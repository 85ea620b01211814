// Matrix addition C = A + B on the GPU, timed warm, checked against the same sum on the CPU.
// Usage: ./app [N] [RUNS]   (N x N matrices of floats, default 1024; RUNS timed launches, default 20)
// The kernel is launched WARMUP times untimed (the first launch also loads the module), then
// RUNS times, each between two cudaEvents; the median launch is reported with the GB/s it
// moves (reads A and B, writes C: 3 x N x N x 4 bytes) and its GFLOP/s (N x N additions),
// next to the device's peak memory bandwidth and an estimate of its fp32 peak.
// Prints the check ("check: PASSED, max abs error ...") and writes result.txt.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cuda_runtime.h>

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

__global__ void matrix_add(const float *a, const float *b, float *c, int n) {
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < n && col < n) {
        c[row * n + col] = a[row * n + col] + b[row * n + col];
    }
}

int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 1024;
    int runs = argc > 2 ? atoi(argv[2]) : 20;
    if (n <= 0 || runs <= 0) {
        fprintf(stderr, "usage: %s [N>0] [RUNS>0]\n", argv[0]);
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

    dim3 block(16, 16);
    dim3 grid((n + block.x - 1) / block.x, (n + block.y - 1) / block.y);
    for (int i = 0; i < WARMUP; i++) {
        matrix_add<<<grid, block>>>(da, db, dc, n);
    }
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());

    // One pair of events per launch, all recorded before the first is read.
    std::vector<cudaEvent_t> events(2 * (size_t)runs);
    for (cudaEvent_t &e : events) CUDA_CHECK(cudaEventCreate(&e));
    for (int i = 0; i < runs; i++) {
        CUDA_CHECK(cudaEventRecord(events[2 * i]));
        matrix_add<<<grid, block>>>(da, db, dc, n);
        CUDA_CHECK(cudaEventRecord(events[2 * i + 1]));
    }
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaEventSynchronize(events.back()));
    std::vector<float> times(runs);
    for (int i = 0; i < runs; i++) CUDA_CHECK(cudaEventElapsedTime(&times[i], events[2 * i], events[2 * i + 1]));
    for (cudaEvent_t e : events) cudaEventDestroy(e);
    std::sort(times.begin(), times.end());
    double ms = runs % 2 ? times[runs / 2] : (times[runs / 2 - 1] + times[runs / 2]) / 2.0;
    double gbps = 3.0 * (double)bytes / (ms * 1e6);  // bytes per ms / 1e6 = GB/s
    double gflops = (double)count / (ms * 1e6);
    CUDA_CHECK(cudaMemcpy(c.data(), dc, bytes, cudaMemcpyDeviceToHost));

    double max_err = 0;
    for (size_t i = 0; i < count; i++) {
        max_err = fmax(max_err, fabs((double)c[i] - (double)expected[i]));
    }
    bool ok = max_err == 0.0;
    printf("matrix add %dx%d: kernel %.3f ms per launch (median of %d timed launches after %d warm-up; "
           "fastest %.3f ms)\n", n, n, ms, runs, WARMUP, times[0]);
    if (peaks.bytes_per_s > 0) {
        printf("throughput: %.1f GB/s (%.0f%% of peak; %zu bytes moved a launch), %.1f GFLOP/s\n", gbps,
               100.0 * gbps * 1e9 / peaks.bytes_per_s, 3 * bytes, gflops);
    } else {
        printf("throughput: %.1f GB/s (%zu bytes moved a launch), %.1f GFLOP/s\n", gbps, 3 * bytes, gflops);
    }
    print_peaks(peaks);
    printf("check: %s, max abs error %g against the CPU sum\n", ok ? "PASSED" : "FAILED", max_err);
    FILE *f = fopen("result.txt", "w");
    if (f) {
        fprintf(f, "n=%d runs=%d kernel_ms_median=%.4f gbps=%.1f gflops=%.1f peak_gbps=%.1f "
                "max_abs_error=%g check=%s\n", n, runs, ms, gbps, gflops, peaks.bytes_per_s / 1e9, max_err,
                ok ? "PASSED" : "FAILED");
        fprintf(f, "c[0]=%g c[last]=%g\n", c[0], c[count - 1]);
        fclose(f);
    }
    cudaFree(da);
    cudaFree(db);
    cudaFree(dc);
    return ok ? 0 : 1;
}
