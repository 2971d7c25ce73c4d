// SPDX-License-Identifier: BSD-2-Clause
/*
 * Prints docs/json-schema.md (schema_doc.h) to stdout; with --check FILE, compares FILE with
 * it instead and fails, naming the first line that differs, when FILE is not current: a
 * descriptor changed without the page.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "model/schema_doc.h"

static int check(const char *path)
{
	char *want = NULL, *have = NULL;
	size_t wlen = 0, hlen = 0, line = 1;
	FILE *m = open_memstream(&want, &wlen);
	FILE *f = fopen(path, "r");
	int ret = 1;

	if (!m || sp_schema_doc(m) || fclose(m)) {
		fprintf(stderr, "schema_doc: cannot generate the page\n");
		return 1;
	}
	if (!f) {
		perror(path);
		free(want);
		return 1;
	}
	if (getdelim(&have, &hlen, '\0', f) < 0)
		hlen = 0;
	else
		hlen = strlen(have);
	fclose(f);
	if (hlen == wlen && !memcmp(want, have, wlen)) {
		ret = 0;
	} else {
		size_t i = 0;

		for (; i < wlen && i < hlen && want[i] == have[i]; i++)
			line += want[i] == '\n';
		fprintf(stderr, "%s:%zu: not what the descriptors generate: run "
			"build/tests/schema_doc > docs/json-schema.md\n", path, line);
	}
	free(want);
	free(have);
	return ret;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "--check"))
		return check(argv[2]);
	if (argc != 1) {
		fprintf(stderr, "usage: schema_doc [--check FILE]\n");
		return 2;
	}
	return sp_schema_doc(stdout) || fflush(stdout) ? 1 : 0;
}
