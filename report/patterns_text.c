/* The text report's detail of the table "patterns" (npanalyze patterns):
 * the generic table shortens long strings to fit the width, so each pattern
 * is repeated here with its conditions in full, word-wrapped, and the ids of
 * the requests it explains (table "pattern_requests"). */
#include <stdlib.h>
#include <string.h>
#include "patterns_text.h"
#include "texttab.h"
#include "units.h"

static const char *cell_str(const struct np_table *t, size_t row, int col)
{
	const struct np_cell *c = col >= 0 ? np_table_cell_c(t, row, (size_t)col) : NULL;
	return c && c->kind == NP_CELL_STR && c->s ? c->s : "";
}

static char *cell_text(const struct np_table *t, size_t row, int col, char *buf, size_t size)
{
	const struct np_cell *c = col >= 0 ? np_table_cell_c(t, row, (size_t)col) : NULL;
	if (!c || c->kind == NP_CELL_NIL) snprintf(buf, size, "?");
	else if (c->kind == NP_CELL_STR) snprintf(buf, size, "%s", c->s ? c->s : "");
	else if (c->kind == NP_CELL_INT) snprintf(buf, size, "%lld", (long long)c->i);
	else if (c->kind == NP_CELL_UINT) snprintf(buf, size, "%llu", (unsigned long long)c->u);
	else snprintf(buf, size, "%g", c->f);
	return buf;
}

/* Writes the words of text from column indent on, wrapped at width. */
static void wrap(FILE *f, const char *text, size_t indent, size_t width)
{
	size_t col = indent;
	fprintf(f, "%*s", (int)indent, "");
	for (const char *p = text; *p;) {
		while (*p == ' ') p++;
		size_t wl = strcspn(p, " ");
		if (!wl) break;
		char word[512];
		snprintf(word, sizeof(word), "%.*s", (int)(wl < sizeof(word) ? wl : sizeof(word) - 1), p);
		size_t ww = rpt_strwidth(word);
		if (col > indent && col + 1 + ww > width) { fprintf(f, "\n%*s", (int)indent, ""); col = indent; }
		else if (col > indent) { fputc(' ', f); col++; }
		fputs(word, f);
		col += ww;
		p += wl;
	}
	fputc('\n', f);
}

/* max_ids: request ids listed per pattern (0 = all); an incident report is
 * read on a terminal, the full list belongs in the CSV. */
void rpt_patterns_detail(FILE *f, const struct np_analysis *a, const struct np_table *t, size_t width,
			 size_t max_ids)
{
	const struct np_table *req = np_analysis_table(a, "pattern_requests");
	int cp = np_table_find_col(t, "pattern"), cc = np_table_find_col(t, "conditions");
	int cs = np_table_find_col(t, "support"), ci = np_table_find_col(t, "intervals");
	int rp = req ? np_table_find_col(req, "pattern") : -1, rr = req ? np_table_find_col(req, "request") : -1;
	if (cp < 0 || cc < 0) return;
	fputs("Patterns in full\n", f);
	for (size_t r = 0; r < t->nrows; r++) {
		char id[64], sup[64], ids[64];
		cell_text(t, r, cp, id, sizeof(id));
		fprintf(f, "  pattern %s: %s requests, latency %s ms\n", id, cell_text(t, r, cs, sup, sizeof(sup)),
			cell_str(t, r, ci));
		wrap(f, cell_str(t, r, cc), 4, width);
		if (rp < 0 || rr < 0) continue;
		size_t cap = 256, len = 0, shown = 0, more = 0;
		char *list = malloc(cap);
		for (size_t q = 0; list && q < req->nrows; q++) {
			if (strcmp(cell_text(req, q, rp, ids, sizeof(ids)), id)) continue;
			if (max_ids && shown == max_ids) { more++; continue; }
			shown++;
			const char *v = cell_str(req, q, rr);
			size_t need = len + strlen(v) + 2;
			if (need > cap) {
				char *n = realloc(list, cap = 2 * need);
				if (!n) break;
				list = n;
			}
			len += (size_t)sprintf(list + len, "%s%s", len ? " " : "", v);
		}
		if (list && len) {
			fputs("    requests:\n", f);
			wrap(f, list, 6, width);
			if (more)
				fprintf(f, "      ... and %zu more (--wide lists all; CSV pattern_requests has every one)\n", more);
		}
		free(list);
	}
	fputc('\n', f);
}
