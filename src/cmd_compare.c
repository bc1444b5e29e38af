// cmd_compare.c — `precprobe compare ACTUAL EXPECTED`: torch.testing.assert_close on files.
#include <stdio.h>

#include "cli.h"

int pp_cmd_compare(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "precprobe compare: not built yet\n");
    return 2;
}
