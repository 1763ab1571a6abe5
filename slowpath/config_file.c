/* SPDX-License-Identifier: BSD-3-Clause */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../fastpath/dp.h"
#include "config_file.h"

static char *
trim(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = '\0';
	return s;
}

/* The next whitespace-separated word of *s (NUL-terminated in place). */
static char *
word(char **s)
{
	char *w = *s;

	while (isspace((unsigned char)*w))
		w++;
	if (*w == '\0')
		return NULL;
	*s = w + strcspn(w, " \t\r\v\f");
	if (**s != '\0')
		*(*s)++ = '\0';
	return w;
}

/* Grows *arr (of elem-sized items, *n used) by one; NULL: no memory. */
static void *
push(void *arr, size_t *n, size_t elem)
{
	void **a = arr;
	char *p;

	if ((*n & (*n - 1)) == 0) {	/* 0, 1, 2, 4, ...: double */
		p = realloc(*a, (*n ? 2 * *n : 1) * elem);
		if (p == NULL)
			return NULL;
		*a = p;
	}
	p = (char *)*a + (*n)++ * elem;
	memset(p, 0, elem);
	return p;
}

/* "tenant NAME KEY=VALUE ...": the pairs stay text, the table reads them
 * when the line is applied. */
static int
tenant_line(char *rest, int lineno, struct hg_conf_file *f, char *err,
	    size_t errlen)
{
	struct hg_conf_tenant *t;
	char *w, *eq;

	if (f->n_ten >= HG_MAX_TENANTS) {
		snprintf(err, errlen, "%d: more than %u tenants", lineno,
			 HG_MAX_TENANTS);
		return -E2BIG;
	}
	if ((t = push(&f->ten, &f->n_ten, sizeof(*t))) == NULL)
		return -ENOMEM;
	t->line = lineno;
	if ((t->name = word(&rest)) == NULL) {
		snprintf(err, errlen, "%d: tenant needs a name: tenant NAME "
			 "KEY=VALUE ...", lineno);
		return -EINVAL;
	}
	while ((w = word(&rest)) != NULL) {
		eq = strchr(w, '=');
		if (eq == NULL || eq == w) {
			snprintf(err, errlen, "%d: expected KEY=VALUE, not '%.40s'",
				 lineno, w);
			return -EINVAL;
		}
		if (t->n == HG_CONF_MAX_PAIRS) {
			snprintf(err, errlen, "%d: more than %u settings", lineno,
				 HG_CONF_MAX_PAIRS);
			return -E2BIG;
		}
		*eq = '\0';
		t->kv[t->n++] = (struct hg_kv){ w, eq + 1 };
	}
	return 0;
}

/* "KEY VALUE", "KEY=VALUE" or "KEY = VALUE". */
static int
setting_line(char *key, int lineno, struct hg_conf_file *f)
{
	struct hg_conf_setting *s;
	char *val = key + strcspn(key, " \t=");

	if (*val != '\0')
		*val++ = '\0';
	val = trim(val + (*val == '=' ? 1 : 0));
	if (*val == '=')
		val = trim(val + 1);
	if ((s = push(&f->set, &f->n_set, sizeof(*s))) == NULL)
		return -ENOMEM;
	*s = (struct hg_conf_setting){ lineno, key, val };
	return 0;
}

static int
one_line(char *line, int lineno, struct hg_conf_file *f, char *err,
	 size_t errlen)
{
	char *key, *hash = strchr(line, '#');

	if (hash != NULL)
		*hash = '\0';
	key = trim(line);
	if (*key == '\0')
		return 0;
	if (strncmp(key, "tenant", 6) == 0 && isspace((unsigned char)key[6]))
		return tenant_line(key + 7, lineno, f, err, errlen);
	if (strcmp(key, "tenant") == 0) {
		snprintf(err, errlen, "%d: tenant needs a name: tenant NAME "
			 "KEY=VALUE ...", lineno);
		return -EINVAL;
	}
	return setting_line(key, lineno, f);
}

int
hg_conf_parse(char *text, size_t len, struct hg_conf_file *f, char *err,
	      size_t errlen)
{
	const char *nul = memchr(text, '\0', len);
	char *line = text, *nl;
	int lineno = 0, rc = 0;

	memset(f, 0, sizeof(*f));
	f->buf = text;
	if (nul != NULL) {
		for (; line < nul; line++)
			lineno += *line == '\n';
		snprintf(err, errlen, "%d: a NUL byte", lineno + 1);
		return -EINVAL;
	}
	text[len] = '\0';
	while (rc == 0 && line != NULL && *line != '\0') {
		lineno++;
		if ((nl = strchr(line, '\n')) != NULL)
			*nl = '\0';
		rc = one_line(line, lineno, f, err, errlen);
		line = nl ? nl + 1 : NULL;
	}
	if (rc == -ENOMEM)
		snprintf(err, errlen, "%d: out of memory", lineno);
	return rc;
}

/* Opens path for reading if it is a regular file. O_NONBLOCK: the slow
 * path reads the file between commands, and a FIFO or a device in its
 * place would block open() or fread() until someone writes, while every
 * command waits (test_reload: a FIFO). NULL with errno set and err
 * written otherwise. */
static FILE *
open_regular(const char *path, char *err, size_t errlen)
{
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC), e = 0;
	struct stat st;
	FILE *fp;

	if (fd < 0) {
		snprintf(err, errlen, "cannot open %s: %s", path, strerror(errno));
		return NULL;
	}
	if (fstat(fd, &st) < 0)
		e = errno;
	else if (!S_ISREG(st.st_mode))
		e = EINVAL;
	if (e != 0) {
		close(fd);
		snprintf(err, errlen, "cannot read %s: %s", path,
			 e == EINVAL ? "not a regular file" : strerror(e));
		errno = e;
		return NULL;
	}
	if ((fp = fdopen(fd, "r")) == NULL) {
		snprintf(err, errlen, "cannot open %s: %s", path, strerror(errno));
		close(fd);
	}
	return fp;
}

int
hg_conf_read(const char *path, struct hg_conf_file *f, char *err, size_t errlen)
{
	FILE *fp = open_regular(path, err, errlen);
	char *text, e[160];
	size_t len;
	int rc;

	memset(f, 0, sizeof(*f));
	if (fp == NULL)
		return -errno;
	/* one byte more than the limit tells a file that is too large */
	text = malloc(HG_CONF_MAX_BYTES + 2);
	len = text ? fread(text, 1, HG_CONF_MAX_BYTES + 1, fp) : 0;
	rc = text == NULL ? -ENOMEM : ferror(fp) ? -EIO : 0;
	fclose(fp);
	if (rc == 0 && len > HG_CONF_MAX_BYTES)
		rc = -EFBIG;
	if (rc < 0) {
		free(text);
		snprintf(err, errlen, "cannot read %s: %s", path, strerror(-rc));
		return rc;
	}
	if ((rc = hg_conf_parse(text, len, f, e, sizeof(e))) < 0)
		snprintf(err, errlen, "%s:%s", path, e);
	return rc;
}

void
hg_conf_file_free(struct hg_conf_file *f)
{
	free(f->buf);
	free(f->set);
	free(f->ten);
	memset(f, 0, sizeof(*f));
}
