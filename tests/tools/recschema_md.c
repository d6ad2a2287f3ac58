/* Writes docs/records/schema.md from the record schemas (common/recschema.h):
 *   build/tools/recschema_md > docs/records/schema.md */
#include <stdio.h>
#include <string.h>
#include "recschema.h"

int main(int argc, char **argv)
{
	if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		puts("usage: recschema_md > docs/records/schema.md\n"
		     "Prints the record schemas of common/recschema.h as Markdown. Exit 0.");
		return 0;
	}
	np_recschema_markdown(stdout);
	return ferror(stdout) ? 1 : 0;
}
