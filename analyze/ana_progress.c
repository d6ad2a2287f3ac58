/* The reading progress line (ana_progress.h). */
#include <stdio.h>
#include <sys/stat.h>
#include <time.h>
#include "ana_progress.h"

static double prog_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void ana_progress_init(struct ana_progress *p, bool on, char *const *paths, int n)
{
	*p = (struct ana_progress){ .on = on, .nfiles = n };
	for (int i = 0; i < n; i++) {
		struct stat st;
		if (!stat(paths[i], &st))
			p->total_bytes += (uint64_t)st.st_size;
	}
	p->t0 = p->last = prog_now();
}

void ana_progress_file(struct ana_progress *p, int idx, const char *path)
{
	p->file = idx;
	p->name = path;
}

void ana_progress_tick(struct ana_progress *p, uint64_t file_bytes, uint64_t events)
{
	if (!p || !p->on)
		return;
	double now = prog_now();
	if (now - p->last < 0.2)
		return;
	p->last = now;
	double el = now - p->t0, done = (double)(p->done_bytes + file_bytes);
	double frac = p->total_bytes ? done / (double)p->total_bytes : 0;
	if (frac > 1)
		frac = 1;
	char eta[32] = "--:--";
	if (frac > 0.01) {
		unsigned s = (unsigned)(el / frac - el + 0.5);
		snprintf(eta, sizeof(eta), "%u:%02u", s / 60, s % 60);
	}
	const int width = 20;
	char bar[32];
	int fill = (int)(frac * width);
	for (int i = 0; i < width; i++)
		bar[i] = i < fill ? '#' : '.';
	bar[width] = 0;
	fprintf(stderr, "\r\033[Knpanalyze: [%s] %3.0f%% file %d/%d %.0f/%.0f MB %.1f M events %.2f M ev/s ETA %s",
		bar, frac * 100, p->file, p->nfiles, done / 1e6, (double)p->total_bytes / 1e6,
		(double)events / 1e6, el > 0 ? (double)events / el / 1e6 : 0, eta);
	fflush(stderr);
	p->drawn = true;
}

void ana_progress_file_done(struct ana_progress *p, uint64_t file_bytes)
{
	if (p)
		p->done_bytes += file_bytes;
}

void ana_progress_clear(struct ana_progress *p)
{
	if (!p || !p->drawn)
		return;
	fprintf(stderr, "\r\033[K");
	fflush(stderr);
	p->drawn = false;
}
