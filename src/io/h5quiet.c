// h5quiet.c — HDF5's error printing off and back on (see h5quiet.h).
#include "io/h5quiet.h"

void pp_h5_quiet_begin(pp_h5_quiet *q)
{
    H5Eget_auto2(H5E_DEFAULT, &q->func, &q->data);
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
}

void pp_h5_quiet_end(const pp_h5_quiet *q)
{
    H5Eset_auto2(H5E_DEFAULT, q->func, q->data);
}
