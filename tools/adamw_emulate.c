// adamw_emulate.c — precprobe's AdamW element update on given θ₀ and gradients (binary32 data on
// stdin, θ/m/v on stdout), for tools/adamw_torch_parity.py.
// Run: build/rel/tools/adamw_emulate UPDATE KERNELS P M V KAHAN C LR B1 B2 EPS WD N T < in.f32 > out.f32
// (UPDATE anyprecision|torch, KERNELS cuda|cpu|cuda-fused: the torch_kernels knob)
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adamw.h"
#include "adamw_problem.h"
#include "core/tensor.h"

int main(int argc, char **argv)
{
    if (argc != 15 || (strcmp(argv[2], "cuda") && strcmp(argv[2], "cpu") && strcmp(argv[2], "cuda-fused"))) {
        fprintf(stderr, "usage: adamw_emulate anyprecision|torch cuda|cpu|cuda-fused P M V kahan(0|1) C lr b1 b2 eps "
                        "wd n T\n");
        return 2;
    }
    pp_adamw_variant va = {0};
    va.update = strcmp(argv[1], "torch") ? PP_ADAMW_ANYPRECISION : PP_ADAMW_TORCH;
    va.kernels = !strcmp(argv[2], "cpu")          ? PP_ADAMW_KERNELS_CPU
                 : !strcmp(argv[2], "cuda-fused") ? PP_ADAMW_KERNELS_CUDA_FUSED
                                                  : PP_ADAMW_KERNELS_CUDA;
    char **a = argv + 1;  // a[2..13]: the arguments after KERNELS
    if (pp_format_from_name(a[2], &va.param) || pp_format_from_name(a[3], &va.momentum) ||
        pp_format_from_name(a[4], &va.variance) || pp_format_from_name(a[6], &va.compensation)) {
        fprintf(stderr, "adamw_emulate: unknown format\n");
        return 2;
    }
    va.kahan = atoi(a[5]);
    pp_adamw_hyper h = {atof(a[7]), atof(a[8]), atof(a[9]), atof(a[10]), atof(a[11])};
    long n = atol(a[12]), T = atol(a[13]);
    float *th = malloc((size_t)n * sizeof *th), *g = malloc((size_t)n * sizeof *g);
    pp_adamw_elem *e = calloc((size_t)n, sizeof *e);
    if (!th || !g || !e || fread(th, sizeof *th, (size_t)n, stdin) != (size_t)n)
        return 3;
    for (long i = 0; i < n; i++)
        e[i].theta = th[i];
    uint32_t rb[2] = {0, 0};
    for (long t = 1; t <= T; t++) {
        if (fread(g, sizeof *g, (size_t)n, stdin) != (size_t)n)
            return 3;
        pp_adamw_scalars s = pp_adamw_scalars_make(va.update, &h, h.lr, (int)t);
        for (long i = 0; i < n; i++)
            pp_adamw_elem_step(&va, &s, &e[i], g[i], rb);
    }
    for (long i = 0; i < n; i++)
        fwrite(&e[i].theta, sizeof(float), 1, stdout);
    for (long i = 0; i < n; i++)
        fwrite(&e[i].m, sizeof(float), 1, stdout);
    for (long i = 0; i < n; i++)
        fwrite(&e[i].v, sizeof(float), 1, stdout);
    free(th), free(g), free(e);
    return 0;
}
