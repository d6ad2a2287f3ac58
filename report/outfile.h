/* Files npreport creates: private to their owner. */
#ifndef NP_REPORT_OUTFILE_H
#define NP_REPORT_OUTFILE_H
#include <stdio.h>

/* Creates (or truncates) path for writing with mode 0600 whatever the
 * umask or an existing file's mode; NULL with errno set on failure. */
FILE *rpt_create(const char *path);

#endif
