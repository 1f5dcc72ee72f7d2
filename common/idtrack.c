/* SPDX-License-Identifier: ISC */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "idtrack.h"

/* Where the tracker is in a member of the top-level object. */
enum {
	IT_KEY_WAIT = 0,	/* before a key */
	IT_KEY,			/* in a key */
	IT_COLON,		/* after a key */
	IT_VALUE_WAIT,		/* after the colon */
	IT_ID_STRING,		/* in the id, a string */
	IT_ID_NUMBER,		/* in the id, a number or literal */
	IT_STRING,		/* in another member's string value */
	IT_SCALAR,		/* in another member's number or literal */
	IT_NESTED,		/* in another member's object or array */
	IT_AFTER_VALUE		/* after a value */
};

void
idtrack_init(struct idtrack *t)
{
	memset(t, 0, sizeof *t);
}

/* Keep one more byte of the id. */
static void
idtrack_keep(struct idtrack *t, char ch)
{
	if (t->idlen >= sizeof t->id) {
		t->failed = 1;
		return;
	}
	t->id[t->idlen++] = ch;
}

/* Is the member's key this one? */
static int
idtrack_key_is(const struct idtrack *t, const char *key)
{
	size_t	len = strlen(key);

	return (t->keylen == len && !t->key_escaped &&
	    memcmp(t->key, key, len) == 0);
}

/* Is this key "id"? */
static int
idtrack_is_id(const struct idtrack *t)
{
	return (idtrack_key_is(t, "id"));
}

/* A byte inside a string. */
static void
idtrack_string(struct idtrack *t, char ch)
{
	if (t->escape) {
		t->escape = 0;
		if (t->state == IT_KEY)
			t->key_escaped = 1;
		else if (t->state == IT_ID_STRING)
			idtrack_keep(t, ch);
		return;
	}
	if (ch == '\\') {
		t->escape = 1;
		if (t->state == IT_ID_STRING)
			idtrack_keep(t, ch);
		return;
	}
	if (ch == '"') {
		t->in_string = 0;
		if (t->state == IT_KEY) {
			t->state = IT_COLON;
			if (idtrack_key_is(t, "result") ||
			    idtrack_key_is(t, "error"))
				t->response = 1;
		}
		else if (t->state == IT_ID_STRING) {
			idtrack_keep(t, ch);
			t->found = 1;
			t->state = IT_AFTER_VALUE;
		} else if (t->state == IT_STRING)
			t->state = IT_AFTER_VALUE;
		return;
	}
	if (t->state == IT_KEY) {
		if (t->keylen < sizeof t->key)
			t->key[t->keylen] = ch;
		t->keylen++;
	} else if (t->state == IT_ID_STRING)
		idtrack_keep(t, ch);
}


/* A byte outside strings, in the top-level object. */
static void
idtrack_member(struct idtrack *t, char ch)
{
	int	ws = ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r';

	switch (t->state) {
	case IT_ID_NUMBER:
		if (ch != ',' && ch != '}' && !ws) {
			idtrack_keep(t, ch);
			return;
		}
		t->found = 1;
		t->state = IT_AFTER_VALUE;
		break;
	case IT_SCALAR:
		if (ch != ',' && ch != '}' && !ws)
			return;
		t->state = IT_AFTER_VALUE;
		break;
	default:
		break;
	}
	if (ws)
		return;
	switch (t->state) {
	case IT_KEY_WAIT:
	case IT_AFTER_VALUE:
		if (ch == ',')
			t->state = IT_KEY_WAIT;
		else if (ch == '}')
			t->depth = 0;
		else if (ch == '"' && t->state == IT_KEY_WAIT) {
			t->in_string = 1;
			t->state = IT_KEY;
			t->keylen = 0;
			t->key_escaped = 0;
		} else
			t->failed = 1;
		break;
	case IT_COLON:
		if (ch == ':')
			t->state = IT_VALUE_WAIT;
		else
			t->failed = 1;
		break;
	case IT_VALUE_WAIT:
		if (idtrack_is_id(t) && t->found) {
			t->failed = 1;	/* a second id: trust neither */
			break;
		}
		if (ch == '"') {
			t->in_string = 1;
			if (idtrack_is_id(t)) {
				t->state = IT_ID_STRING;
				idtrack_keep(t, ch);
			} else
				t->state = IT_STRING;
		} else if (ch == '{' || ch == '[') {
			t->depth = 2;
			t->state = IT_NESTED;
		} else if (idtrack_is_id(t)) {
			t->state = IT_ID_NUMBER;
			idtrack_keep(t, ch);
		} else
			t->state = IT_SCALAR;
		break;
	default:
		t->failed = 1;
		break;
	}
}

void
idtrack_feed(struct idtrack *t, const char *p, size_t n)
{
	size_t	i;
	char	ch;

	for (i = 0; i < n && !(t->found && t->response) && !t->failed;
	    i++) {
		ch = p[i];
		if (t->in_string) {
			idtrack_string(t, ch);
			continue;
		}
		if (t->depth == 0) {
			if (ch == '{') {
				t->depth = 1;
				t->state = IT_KEY_WAIT;
			} else if (ch != ' ' && ch != '\t' && ch != '\n' &&
			    ch != '\r')
				t->failed = 1;
			continue;
		}
		if (t->depth > 1) {
			if (ch == '"')
				t->in_string = 1;
			else if (ch == '{' || ch == '[')
				t->depth++;
			else if ((ch == '}' || ch == ']') && --t->depth == 1)
				t->state = IT_AFTER_VALUE;
			continue;
		}
		idtrack_member(t, ch);
	}
}

int
idtrack_int64(const struct idtrack *t, int64_t *v)
{
	char		 buf[IDTRACK_MAX + 1], *end;
	long long	 ll;

	if (!t->found || !t->response || t->idlen == 0 || t->id[0] == '"')
		return (-1);
	memcpy(buf, t->id, t->idlen);
	buf[t->idlen] = '\0';
	ll = strtoll(buf, &end, 10);
	if (*end != '\0' || end == buf)
		return (-1);
	*v = ll;
	return (0);
}
