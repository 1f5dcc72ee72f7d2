/* SPDX-License-Identifier: ISC */
/*
 * Pinned tool definitions.  The first time the gateway sees one of an
 * upstream's tools it records the SHA-256 of the tool's definition in
 * canonical form (pin_canonical), and the definition itself; when the
 * upstream later lists a different one, pinning = "enforce" holds the
 * tool back (not in the catalog; a call is told why) until the operator
 * approves the change (mcpctl tools approve), "warn" lists it and logs
 * and counts the change, "off" records nothing.  A change is logged and
 * counted once per distinct new definition, however often the catalog
 * and the views are rebuilt.  The pins are kept in the state directory
 * (pin_store.c) and so survive restarts and reloads.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/evp.h>

#include <event2/buffer.h>

#include "log.h"
#include "naming.h"
#include "pin.h"
#include "supervisor.h"
#include "xmalloc.h"

/* What a definition is: the members of a tool that are hashed. */
static const char *const pin_fields[] = {
	"name", "title", "description", "inputSchema", "outputSchema",
	"annotations", NULL
};

struct pin_state	 pins;

/* Per upstream name: the changes seen (a counter never goes back). */
struct pin_count {
	uint64_t	 changes;
	unsigned int	 held;		/* while writing the metrics */
};

static struct strmap	 pin_counts;	/* upstream name -> pin_count */
static int		 pin_full_warned;

void
pin_init(void)
{
	TAILQ_INIT(&pins.list);
	TAILQ_INIT(&pins.held);
	strmap_init(&pins.map);
	strmap_init(&pin_counts);
}

/* The map's key of an upstream's tool: "upstream/" and the name's JSON. */
static char *
pin_key(const char *upstream, const char *tool, size_t len)
{
	json_t	*s;
	char	*text, *key;

	s = json_stringn(tool, len);
	if (s == NULL || (text = json_dumps(s, JSON_ENCODE_ANY)) == NULL)
		fatalx("pin_key");
	json_decref(s);
	xasprintf(&key, "%s/%s", upstream, text);
	free(text);
	return (key);
}

struct pin *
pin_find(const char *upstream, const char *tool, size_t len)
{
	struct pin	*p;
	char		*key;

	key = pin_key(upstream, tool, len);
	p = strmap_get(&pins.map, key);
	free(key);
	return (p);
}

/* Account for a kept definition's text; NULL if it is not kept. */
static char *
pin_keep(char *text, size_t len)
{
	if (text == NULL)
		return (NULL);
	if (len > PIN_DEF_MAX || pins.kept + len > PIN_STORE_MAX) {
		free(text);
		return (NULL);
	}
	pins.kept += len;
	return (text);
}

static void
pin_unkeep(char **text)
{
	if (*text == NULL)
		return;
	pins.kept -= strlen(*text);
	free(*text);
	*text = NULL;
}

struct pin *
pin_add(const char *upstream, const char *tool, size_t len,
    const unsigned char *digest, char *def, time_t when)
{
	struct pin	*p;
	char		*key;

	p = xcalloc(1, sizeof *p);
	p->upstream = xstrdup(upstream);
	p->tool = xmalloc(len + 1);
	memcpy(p->tool, tool, len);
	p->tool[len] = '\0';
	p->toollen = len;
	memcpy(p->digest, digest, PIN_DIGEST_LEN);
	p->def = pin_keep(def, def != NULL ? strlen(def) : 0);
	p->pinned_at = when;
	key = pin_key(upstream, tool, len);
	if (strmap_add(&pins.map, key, p) != 0)
		fatalx("pin_add: %s pinned twice", key);
	free(key);
	TAILQ_INSERT_TAIL(&pins.list, p, entry);
	pins.n++;
	return (p);
}

/* Free a pin (removed from the list and map by the caller). */
static void
pin_free_one(struct pin *p)
{
	pin_unkeep(&p->def);
	pin_unkeep(&p->seen_def);
	free(p->reported);
	free(p->upstream);
	free(p->tool);
	free(p);
}

void
pin_free(void)
{
	struct pin	*p;
	size_t		 i;
	struct strmap_entry *e;

	pin_store_close();
	while ((p = TAILQ_FIRST(&pins.list)) != NULL) {
		TAILQ_REMOVE(&pins.list, p, entry);
		if (p->held)
			TAILQ_REMOVE(&pins.held, p, held_entry);
		pin_free_one(p);
	}
	strmap_free(&pins.map);
	for (i = 0; i < pin_counts.nbuckets; i++) {
		for (e = pin_counts.buckets[i]; e != NULL; e = e->next)
			free(e->value);
	}
	strmap_free(&pin_counts);
	memset(&pins, 0, sizeof pins);
	pin_init();
}

/* The counts of an upstream name. */
static struct pin_count *
pin_count(const char *upstream)
{
	struct pin_count	*c;

	if ((c = strmap_get(&pin_counts, upstream)) == NULL) {
		c = xcalloc(1, sizeof *c);
		strmap_add(&pin_counts, upstream, c);
	}
	return (c);
}

/* The running configuration of an upstream (pinning, overrides). */
const struct server_conf *
pin_server_conf(const struct upstream *up)
{
	size_t	i;

	for (i = 0; i < conf->nservers; i++) {
		if (strcmp(conf->servers[i].name, up->sc->name) == 0)
			return (&conf->servers[i]);
	}
	return (NULL);
}

enum pinning
pin_mode(const struct upstream *up)
{
	const struct server_conf	*sc = pin_server_conf(up);

	return (sc != NULL ? sc->pinning : conf->pinning);
}

char *
pin_canonical(const json_t *tool, size_t *len)
{
	json_t		*o, *v;
	char		*text;
	int		 i;

	o = json_object();
	for (i = 0; pin_fields[i] != NULL; i++) {
		if ((v = json_object_get(tool, pin_fields[i])) != NULL)
			json_object_set(o, pin_fields[i], v);
	}
	text = json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(o);
	if (text == NULL)
		fatalx("pin_canonical: json_dumps");
	*len = strlen(text);
	return (text);
}

void
pin_digest(const char *text, size_t len, unsigned char *out)
{
	unsigned int	n = 0;

	if (EVP_Digest(text, len, out, &n, EVP_sha256(), NULL) != 1 ||
	    n != PIN_DIGEST_LEN)
		fatalx("pin_digest: EVP_Digest");
}

void
pin_hex(const unsigned char *d, char *out)
{
	static const char	 hex[] = "0123456789abcdef";
	size_t			 i;

	for (i = 0; i < PIN_DIGEST_LEN; i++) {
		out[2 * i] = hex[d[i] >> 4];
		out[2 * i + 1] = hex[d[i] & 15];
	}
	out[2 * PIN_DIGEST_LEN] = '\0';
}

void
pin_changed_fields(const char *old, const char *new, char *out,
    size_t outlen)
{
	json_t	*a, *b;
	size_t	 n = 0;
	int	 i;

	out[0] = '\0';
	a = old != NULL ? json_loads(old, JSON_ALLOW_NUL, NULL) : NULL;
	b = json_loads(new, JSON_ALLOW_NUL, NULL);
	if (a == NULL || b == NULL) {
		snprintf(out, outlen, "definition (the pinned one was not "
		    "kept)");
		goto done;
	}
	for (i = 0; pin_fields[i] != NULL; i++) {
		if (json_equal(json_object_get(a, pin_fields[i]),
		    json_object_get(b, pin_fields[i])) ||
		    (json_object_get(a, pin_fields[i]) == NULL &&
		    json_object_get(b, pin_fields[i]) == NULL))
			continue;
		if (n < outlen)
			n += (size_t)snprintf(out + n, outlen - n, "%s%s",
			    n > 0 ? ", " : "", pin_fields[i]);
	}
done:
	json_decref(a);
	json_decref(b);
}

/* Hold a pin's tool back, or list it again. */
static void
pin_set_held(struct pin *p, int held)
{
	if (p->held == held)
		return;
	p->held = held;
	if (held) {
		TAILQ_INSERT_TAIL(&pins.held, p, held_entry);
		pins.nheld++;
	} else {
		TAILQ_REMOVE(&pins.held, p, held_entry);
		pins.nheld--;
	}
}

/* A pinned tool is listed again as pinned: forget what was seen. */
static void
pin_settle(struct pin *p)
{
	pin_set_held(p, 0);
	p->changed = 0;
	p->changed_shared = 0;
	pin_unkeep(&p->seen_def);
}

/* Was a change logged and counted already?  Remembered if not. */
static int
pin_reported(struct pin *p, const unsigned char *d)
{
	unsigned int	i, n;

	if (p->reported == NULL)
		p->reported = xcalloc(PIN_REPORTED, sizeof *p->reported);
	n = p->nreported < PIN_REPORTED ? p->nreported : PIN_REPORTED;
	for (i = 0; i < n; i++) {
		if (memcmp(p->reported[i], d, PIN_DIGEST_LEN) == 0)
			return (1);
	}
	memcpy(p->reported[p->nreported % PIN_REPORTED], d, PIN_DIGEST_LEN);
	p->nreported++;
	return (0);
}

/*
 * The upstream lists a definition other than the pinned one: it is what
 * was seen, and a change not reported yet is logged and counted.  The
 * shared catalog moving to a definition it did not list just before is
 * always a change, even one reported earlier: a tool flipping back to
 * the pinned one and out again is an upstream changing it again.
 */
static void
pin_change(struct upstream *up, struct pin *p, const unsigned char *d,
    char *text, size_t len, enum pinning mode, int global)
{
	char	 fields[160], was[2 * PIN_DIGEST_LEN + 1];
	char	 now[2 * PIN_DIGEST_LEN + 1], tool[128];
	int	 reported, moved;

	moved = global && (!p->changed_shared ||
	    memcmp(p->shared, d, PIN_DIGEST_LEN) != 0);
	if (global) {
		memcpy(p->shared, d, PIN_DIGEST_LEN);
		p->changed_shared = 1;
	}
	if (!moved && p->changed && memcmp(p->seen, d, PIN_DIGEST_LEN) == 0) {
		free(text);
		return;
	}
	if (!(reported = pin_reported(p, d) && !moved))
		pin_changed_fields(p->def, text, fields, sizeof fields);
	pin_unkeep(&p->seen_def);
	memcpy(p->seen, d, PIN_DIGEST_LEN);
	p->seen_def = pin_keep(text, len);
	p->seen_at = time(NULL);
	p->changed = 1;
	if (reported)
		return;
	pin_count(up->sc->name)->changes++;
	pin_hex(p->digest, was);
	pin_hex(d, now);
	access_log_clean(tool, sizeof tool, p->tool, p->toollen);
	log_warnx("pin: upstream %s changed tool \"%s\" (%s): %s changed "
	    "since it was pinned (sha256 %.16s, now %.16s); %s", up->sc->name,
	    tool, p->exposed, fields, was, now, mode == PINNING_ENFORCE ?
	    "held back until approved: mcpctl tools diff, mcpctl tools "
	    "approve" : "listed anyway (pinning = \"warn\")");
}

/*
 * The global catalog is merged again: what is held back is what this
 * merge (and the views after it) hold back, not what an upstream that is
 * gone, a tool no longer listed, or a mode since turned off held.
 */
void
pin_merge_begin(void)
{
	struct pin	*p;

	while ((p = TAILQ_FIRST(&pins.held)) != NULL)
		pin_set_held(p, 0);
	pins.merge++;
}

int
pin_check(struct upstream *up, const json_t *tool, const char *exposed,
    int global)
{
	enum pinning	 mode = pin_mode(up);
	struct pin	*p;
	json_t		*name;
	unsigned char	 d[PIN_DIGEST_LEN];
	char		*text;
	size_t		 len;

	if (mode == PINNING_OFF)
		return (1);
	name = json_object_get(tool, "name");
	text = pin_canonical(tool, &len);
	pin_digest(text, len, d);
	p = pin_find(up->sc->name, json_string_value(name),
	    json_string_length(name));
	if (p == NULL) {
		if (pins.n >= PIN_MAX) {
			if (!pin_full_warned) {
				pin_full_warned = 1;
				log_warnx("pin: %d tools are pinned, the most "
				    "kept: new tools are not pinned, and %s",
				    PIN_MAX, mode == PINNING_ENFORCE ? "held "
				    "back" : "listed");
			}
			free(text);
			return (mode != PINNING_ENFORCE);
		}
		p = pin_add(up->sc->name, json_string_value(name),
		    json_string_length(name), d, text, time(NULL));
		snprintf(p->exposed, sizeof p->exposed, "%s", exposed);
		log_debug("pin: upstream %s, tool %s pinned", up->sc->name,
		    exposed);
		pins.added++;
		pin_store_dirty();
		return (1);
	}
	/* A name the upstream lists twice: the first is the one merged
	 * (the second collides), and checked; the second is held with it,
	 * and is no change of the shared catalog's (it would be one at each
	 * merge). */
	if (global && p->merge == pins.merge) {
		free(text);
		return (!p->held);
	}
	if (global)
		p->merge = pins.merge;
	snprintf(p->exposed, sizeof p->exposed, "%s", exposed);
	if (memcmp(d, p->digest, PIN_DIGEST_LEN) == 0) {
		free(text);
		/* A session's view: its instance lists the pinned one, which
		 * says nothing of what the others list. */
		if (!global)
			return (1);
		if (p->changed_shared)
			log_info("pin: upstream %s lists tool %s as pinned "
			    "again", up->sc->name, exposed);
		pin_settle(p);
		return (1);
	}
	pin_change(up, p, d, text, len, mode, global);
	pin_set_held(p, mode == PINNING_ENFORCE);
	return (!p->held);
}

int
pin_held_error(const char *exposed, char *buf, size_t len)
{
	struct pin	*p;

	/* Only the few held back are looked at: an unknown name is cheap. */
	TAILQ_FOREACH(p, &pins.held, held_entry) {
		if (strcmp(p->exposed, exposed) != 0)
			continue;
		snprintf(buf, len, "tool %s is held back: upstream %s changed "
		    "its definition since it was pinned; an operator must "
		    "approve the change (mcpctl tools approve %s)", exposed,
		    p->upstream, exposed);
		return (1);
	}
	return (0);
}

struct pin *
pin_lookup(const char *name)
{
	struct pin	*p, *found = NULL;
	const char	*slash;

	TAILQ_FOREACH(p, &pins.list, entry) {
		if (strcmp(p->exposed, name) != 0)
			continue;
		/* A changed one first: that is the one asked about. */
		if (p->changed)
			return (p);
		if (found == NULL)
			found = p;
	}
	if (found != NULL)
		return (found);
	/* "upstream/tool", for a pin not seen since the start. */
	if ((slash = strchr(name, '/')) == NULL)
		return (NULL);
	TAILQ_FOREACH(p, &pins.list, entry) {
		if (strlen(p->upstream) == (size_t)(slash - name) &&
		    memcmp(p->upstream, name, (size_t)(slash - name)) == 0 &&
		    strlen(p->tool) == p->toollen &&
		    strcmp(p->tool, slash + 1) == 0)
			return (p);
	}
	return (NULL);
}

int
pin_approve(struct pin *p, const char *digest, char *err, size_t errlen)
{
	char	hex[2 * PIN_DIGEST_LEN + 1];

	if (!p->changed) {
		snprintf(err, errlen, "tool %s of upstream %s has not changed "
		    "since it was pinned", p->exposed[0] != '\0' ? p->exposed :
		    p->tool, p->upstream);
		return (-1);
	}
	pin_hex(p->seen, hex);
	if (digest != NULL && (strlen(digest) < 8 ||
	    strncmp(hex, digest, strlen(digest)) != 0)) {
		snprintf(err, errlen, "the definition of %s changed again "
		    "(sha256 %.16s, not %.16s): see mcpctl tools diff",
		    p->exposed, hex, digest);
		return (-1);
	}
	memcpy(p->digest, p->seen, PIN_DIGEST_LEN);
	/* Changes from here on are to the new pin. */
	p->nreported = 0;
	pin_unkeep(&p->def);
	p->def = p->seen_def;
	p->seen_def = NULL;
	p->pinned_at = time(NULL);
	pin_settle(p);
	log_info("pin: tool %s of upstream %s approved (mcpctl), pinned as "
	    "sha256 %.16s", p->exposed, p->upstream, hex);
	pin_store_write();
	catalog_rebuild();
	return (0);
}

void
pin_metrics_write(struct evbuffer *b)
{
	struct pin_count	*c;
	struct pin		*p;
	char			 labels[160];
	size_t			 i;

	for (i = 0; i < nupstreams; i++)
		pin_count(upstreams[i]->sc->name)->held = 0;
	TAILQ_FOREACH(p, &pins.list, entry) {
		if (p->held)
			pin_count(p->upstream)->held++;
	}
	prom_header(b, "mcp_supervisor_tool_pins", "gauge", "Tool "
	    "definitions pinned (state_dir/pins.json).");
	prom_sample_u64(b, "mcp_supervisor_tool_pins", "", pins.n);
	prom_header(b, "mcp_supervisor_tool_changes_total", "counter",
	    "Changes of pinned tool definitions seen, each distinct new "
	    "definition once.");
	for (i = 0; i < nupstreams; i++) {
		c = pin_count(upstreams[i]->sc->name);
		prom_labels(labels, sizeof labels, "upstream",
		    upstreams[i]->sc->name, NULL);
		prom_sample_u64(b, "mcp_supervisor_tool_changes_total",
		    labels, c->changes);
	}
	prom_header(b, "mcp_supervisor_tools_held", "gauge", "Tools held "
	    "back (pinning = \"enforce\") until an operator approves their "
	    "changed definition.");
	for (i = 0; i < nupstreams; i++) {
		c = pin_count(upstreams[i]->sc->name);
		prom_labels(labels, sizeof labels, "upstream",
		    upstreams[i]->sc->name, NULL);
		prom_sample_u64(b, "mcp_supervisor_tools_held", labels,
		    c->held);
	}
}
