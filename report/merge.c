#include "merge.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int rpt_view_merge(struct np_analysis *view, const struct np_analysis *parts, size_t n)
{
	memset(view, 0, sizeof(*view));
	view->meta.type = MSGPACK_OBJECT_NIL;
	size_t nt = 0, ns = 0, nk = 0, nf = 0;
	for (size_t i = 0; i < n; i++) {
		nt += parts[i].ntables;
		ns += parts[i].nseries;
		nk += parts[i].nsketches;
		nf += parts[i].nfindings;
	}
	view->tables = calloc(nt + 1, sizeof(*view->tables));
	view->series = calloc(ns + 1, sizeof(*view->series));
	view->sketches = calloc(nk + 1, sizeof(*view->sketches));
	view->findings = calloc(nf + 1, sizeof(*view->findings));
	if (!view->tables || !view->series || !view->sketches || !view->findings) {
		rpt_view_free(view);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		const struct np_analysis *p = &parts[i];
		if (p->ntables)
			memcpy(view->tables + view->ntables, p->tables, p->ntables * sizeof(*p->tables));
		view->ntables += p->ntables;
		if (p->nseries)
			memcpy(view->series + view->nseries, p->series, p->nseries * sizeof(*p->series));
		view->nseries += p->nseries;
		if (p->nsketches)
			memcpy(view->sketches + view->nsketches, p->sketches,
			       p->nsketches * sizeof(*p->sketches));
		view->nsketches += p->nsketches;
		if (p->nfindings)
			memcpy(view->findings + view->nfindings, p->findings,
			       p->nfindings * sizeof(*p->findings));
		view->nfindings += p->nfindings;
		const struct np_reader_stats *s = &p->stats;
		view->stats.chunks_ok += s->chunks_ok;
		view->stats.chunks_bad += s->chunks_bad;
		view->stats.bytes_skipped += s->bytes_skipped;
		view->stats.records += s->records;
		view->stats.records_bad += s->records_bad;
		view->stats.truncated |= s->truncated;
		view->stats.bad_file_header |= s->bad_file_header;
		if (view->meta.type == MSGPACK_OBJECT_NIL)
			view->meta = p->meta;
	}
	return 0;
}

void rpt_view_free(struct np_analysis *view)
{
	free(view->tables);
	free(view->series);
	free(view->sketches);
	free(view->findings);
	memset(view, 0, sizeof(*view));
}
