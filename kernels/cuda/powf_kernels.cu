// powf_kernels.cu — the device's powf and kernels/cuda_powf.h's emulation side by side on the GPU
// (cuda/powf_cuda.h). The device's powf here is built with this project's --fmad=false, torch's
// with nvcc's default --fmad=true: the same result, since the SASS of libdevice's powf has no
// multiply-add pair for ptxas to contract under either flag (kernels/cuda_powf.h).
#include <cuda_runtime.h>
#include <math.h>

#include "cuda/cuda_check.h"
#include "cuda/powf_cuda.h"
#include "cuda_powf.h"

__global__ void pp_powf_kernel1(const float *a, const float *b, float *y, float *e, size_t n)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        y[i] = powf(a[i], b[i]);
        e[i] = pp_cuda_powf(a[i], b[i]);
    }
}

extern "C" int pp_cuda_powf_array(const float *a, const float *b, float *y, float *e, size_t n, char *errbuf,
                                  size_t errlen)
{
    int rc = PP_CUDA_OK;
    float *d = NULL;
    if (n == 0)
        return PP_CUDA_OK;
    if (!a || !b || !y || !e) {
        pp_cuda_message(errbuf, errlen, __FILE__, __LINE__, "pp_cuda_powf_array", "NULL array");
        return PP_CUDA_ERR_INPUT;
    }
    PP_CUDA_CHECK(cudaMalloc((void **)&d, 4 * n * sizeof(float)));
    PP_CUDA_CHECK(cudaMemcpy(d, a, n * sizeof(float), cudaMemcpyHostToDevice));
    PP_CUDA_CHECK(cudaMemcpy(d + n, b, n * sizeof(float), cudaMemcpyHostToDevice));
    pp_powf_kernel1<<<(unsigned)((n + 255) / 256), 256>>>(d, d + n, d + 2 * n, d + 3 * n, n);
    PP_CUDA_CHECK(cudaGetLastError());
    PP_CUDA_CHECK(cudaMemcpy(y, d + 2 * n, n * sizeof(float), cudaMemcpyDeviceToHost));
    PP_CUDA_CHECK(cudaMemcpy(e, d + 3 * n, n * sizeof(float), cudaMemcpyDeviceToHost));
done:
    cudaFree(d);
    return rc;
}
