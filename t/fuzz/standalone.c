/* SPDX-License-Identifier: ISC */
/*
 * A driver for the fuzz targets without libFuzzer: runs
 * LLVMFuzzerTestOneInput once on each file named on the command line, or
 * on each regular file of each directory named.  Lets the targets build
 * with any compiler and replay a corpus or a crash as a regression test.
 */
#include "config.h"

#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

/* Run the target on one file; return -1 if it cannot be read. */
static int
run_file(const char *path)
{
	FILE		*f;
	unsigned char	*buf = NULL, *nbuf;
	size_t		 len = 0, cap = 0, n;

	if ((f = fopen(path, "rb")) == NULL) {
		fprintf(stderr, "%s: %s\n", path, strerror(errno));
		return (-1);
	}
	for (;;) {
		if (len == cap) {
			cap = cap == 0 ? 4096 : cap * 2;
			if ((nbuf = realloc(buf, cap)) == NULL) {
				fprintf(stderr, "%s: out of memory\n", path);
				free(buf);
				fclose(f);
				return (-1);
			}
			buf = nbuf;
		}
		n = fread(buf + len, 1, cap - len, f);
		len += n;
		if (n == 0)
			break;
	}
	if (ferror(f)) {
		fprintf(stderr, "%s: read error\n", path);
		free(buf);
		fclose(f);
		return (-1);
	}
	fclose(f);
	/* Exactly len bytes, so tools like ASan see any overrun. */
	if ((nbuf = malloc(len == 0 ? 1 : len)) == NULL) {
		free(buf);
		return (-1);
	}
	memcpy(nbuf, buf, len);
	free(buf);
	LLVMFuzzerTestOneInput(nbuf, len);
	free(nbuf);
	return (0);
}

/* Run the target on every regular file of a directory, in name order. */
static int
run_dir(const char *dir, size_t *count)
{
	struct dirent	**names;
	struct stat	  st;
	char		 *path;
	int		  n, i, bad = 0;

	if ((n = scandir(dir, &names, NULL, alphasort)) < 0) {
		fprintf(stderr, "%s: %s\n", dir, strerror(errno));
		return (-1);
	}
	for (i = 0; i < n; i++) {
		if (names[i]->d_name[0] == '.' ||
		    asprintf(&path, "%s/%s", dir, names[i]->d_name) < 0) {
			free(names[i]);
			continue;
		}
		if (stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
			if (run_file(path) != 0)
				bad = -1;
			else
				(*count)++;
		}
		free(path);
		free(names[i]);
	}
	free(names);
	return (bad);
}

int
main(int argc, char **argv)
{
	struct stat	st;
	size_t		count = 0;
	int		i, bad = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: %s file|directory ...\n", argv[0]);
		return (2);
	}
	for (i = 1; i < argc; i++) {
		if (stat(argv[i], &st) == 0 && S_ISDIR(st.st_mode)) {
			if (run_dir(argv[i], &count) != 0)
				bad = 1;
		} else if (run_file(argv[i]) != 0)
			bad = 1;
		else
			count++;
	}
	fprintf(stderr, "%s: %zu inputs\n", argv[0], count);
	return (bad);
}
