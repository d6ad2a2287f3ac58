/* Numbers given on the command line: see numarg.h. */
#include "numarg.h"

#include <errno.h>
#include <stdlib.h>

int np_parse_num(const char *s, double lo, double hi, double *out, const char **unit)
{
	char *end;
	if (!s)
		return -1;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || end == s || (!unit && *end) || !(v >= lo && v <= hi))
		return -1;
	*out = v;
	if (unit)
		*unit = end;
	return 0;
}
