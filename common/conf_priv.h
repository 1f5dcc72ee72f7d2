/* SPDX-License-Identifier: ISC */
/*
 * What the configuration's parser, printer and JSON form share; private
 * to common/conf*.c.
 */
#ifndef MCPS_CONF_PRIV_H
#define MCPS_CONF_PRIV_H

#include <stddef.h>
#include <stdio.h>

#include <libconfig.h>

#include "conf.h"

/* A parse in progress: where errors go. */
struct conf_ctx {
	const char	*file;
	char		*err;
	size_t		 errlen;
	struct conf	*conf;		/* being read: its included files */
};

/* Names of the enums' values, indexed by value. */
extern const char *const conf_transport_names[];
extern const char *const conf_strategy_names[];
extern const char *const conf_isolation_names[];
extern const char *const conf_llm_provider_names[];
extern const char *const conf_era_names[];

/* Free a NULL-terminated string vector (NULL is fine). */
void	conf_strv_free(char **);
/* Compare two string vectors (either may be NULL). */
int	conf_strv_equal(char *const *, char *const *);
/* Look a name up in a table of n names; -1 if absent. */
int	conf_lookup_name(const char *const *names, size_t n, const char *);
/* Is s 1 to max characters of A-Z a-z 0-9 _ - ., from a letter or digit? */
int	conf_valid_name(const char *, size_t max);
/* The longest name of a server, an llm or a rate limit. */
#define CONF_NAME_MAX	48
/* Read the name of what ("server"); -1 (reported) if it is not one. */
int	conf_get_name(struct conf_ctx *, const config_setting_t *,
	    const char *what, char **);
/* Is s one ${env:NAME} or ${file:/path} reference and nothing else? */
int	conf_secret_reference(const char *);
/* The length of a list of at most max groups; -1 (reported) if not one. */
int	conf_list_length(struct conf_ctx *, const config_setting_t *,
	    const char *shape, int max, const char *plural);

/* Is s valid UTF-8 (as jansson takes it)? */
int	conf_valid_utf8(const char *);
/* Report an error at a setting's line ("file:line: ..."); returns -1. */
int	conf_error(struct conf_ctx *, const config_setting_t *, const char *,
	    ...) __attribute__((format(printf, 3, 4)));
/* Read a setting of a type, within bounds; -1 (reported) if it is not. */
int	conf_get_string(struct conf_ctx *, const config_setting_t *, char **,
	    int allow_empty);
int	conf_get_int(struct conf_ctx *, const config_setting_t *,
	    long long min, long long max, long long *);
int	conf_get_bool(struct conf_ctx *, const config_setting_t *, int *);
int	conf_get_seconds(struct conf_ctx *, const config_setting_t *,
	    long long min, long long max, unsigned int *);
int	conf_get_size(struct conf_ctx *, const config_setting_t *,
	    unsigned long long min, unsigned long long max, size_t *);
int	conf_get_strv(struct conf_ctx *, const config_setting_t *,
	    int nonempty, char ***);
int	conf_get_strategies(struct conf_ctx *, const config_setting_t *,
	    enum strategy *, char **targets, size_t *);
/* Read one strategy as written ("llm:NAME": *target "NAME"); -1 if bad. */
int	conf_strategy_parse(const char *, int sampling, enum strategy *,
	    char **target);
/* conf_catalog.c: state_dir, pinning and an upstream's tools overrides. */
int	conf_parse_catalog_key(struct conf_ctx *, const config_setting_t *,
	    struct conf *);
int	conf_parse_server_catalog(struct conf_ctx *, const config_setting_t *,
	    struct server_conf *);
int	conf_check_overrides(struct conf_ctx *, const struct conf *);
void	conf_overrides_free(struct server_conf *);
void	conf_print_catalog(const struct conf *, FILE *);
void	conf_print_server_catalog(const struct server_conf *, FILE *);
/* Print a string quoted and escaped, as the file writes it. */
void	conf_print_str(FILE *, const char *);
void	conf_print_double(FILE *, double);
/* Where a setting was written (its file kept in ctx->conf). */
struct conf_at conf_where(struct conf_ctx *, const config_setting_t *);
/* Report an error at a place (line 0: the file only); returns -1. */
int	conf_error_at(struct conf_ctx *, struct conf_at, const char *, ...)
	    __attribute__((format(printf, 3, 4)));
/* Name another place for an error at here: "line N", or "line N of FILE"
 * when the files differ. */
const char *conf_at_text(struct conf_ctx *, struct conf_at there,
	    struct conf_at here, char *buf, size_t len);
/* Free a sampling list's targets. */
void	conf_targets_free(char **, size_t);
/* Copy a sampling list's targets. */
void	conf_targets_copy(char **to, char *const *from, size_t);
int	conf_get_budget(struct conf_ctx *, const config_setting_t *,
	    struct budget_conf *);
/* Read llm = ( ... ) into conf. */
int	conf_parse_llms(struct conf_ctx *, const config_setting_t *,
	    struct conf *);
/* Check that every llm: and tool: link names what exists. */
int	conf_check_links(struct conf_ctx *, const struct conf *);
/* Read pass_env: names of variables of the daemon's environment. */
int	conf_get_pass_env(struct conf_ctx *, const config_setting_t *,
	    char ***);
/* One setting of a server's traffic policy: 1 if it is one (read, or -1
 * if bad, reported), 0 if not. */
int	conf_traffic_key(struct conf_ctx *, const config_setting_t *,
	    const char *key, struct traffic_conf *);
/* Read rate_limits = ( ... ) into conf. */
int	conf_parse_rate_limits(struct conf_ctx *, const config_setting_t *,
	    struct conf *);
/* A headers group, "Name: value" lines (conf_server.c). */
int	conf_get_headers(struct conf_ctx *, const config_setting_t *,
	    char ***);
/* Read tracing = { ... } into conf (conf_trace.c). */
int	conf_parse_tracing(struct conf_ctx *, const config_setting_t *,
	    struct conf *);
/* Read one group of servers into srv. */
int	conf_parse_server(struct conf_ctx *, const struct conf *,
	    const config_setting_t *, struct server_conf *);

/* endpoints = ( ... ) (conf_endpoint.c); checked once all is read. */
int	conf_parse_endpoints(struct conf_ctx *, const config_setting_t *,
	    struct conf *);
int	conf_check_endpoints(struct conf_ctx *, const struct conf *);
int	conf_check_paths(struct conf_ctx *, const struct conf *);
const char *conf_own_path(const char *p, size_t n);
void	conf_print_endpoints(const struct conf *, FILE *);

/* oauth = { ... } (conf_oauth.c). */
int	conf_parse_oauth(struct conf_ctx *, const config_setting_t *,
	    struct conf *);
/* A client's oauth = { ... }; *out is set (to free) even on error. */
int	conf_parse_client_oauth(struct conf_ctx *, const config_setting_t *,
	    struct oauth_match **out);
/* An upstream's scopes = [ ... ]. */
int	conf_get_server_scopes(struct conf_ctx *, const config_setting_t *,
	    char ***);
/* Check what refers to oauth once everything is read. */
int	conf_check_oauth(struct conf_ctx *, const struct conf *);
void	conf_oauth_free(struct oauth_conf *);
/* An upstream's oauth (conf_upoauth.c). */
int	conf_parse_upoauth(struct conf_ctx *, const config_setting_t *,
	    struct upoauth_conf **);
json_t	*conf_upoauth_to_json(const struct upoauth_conf *);
struct upoauth_conf *conf_upoauth_from_json(const json_t *);
int	conf_upoauth_equal(const struct upoauth_conf *,
	    const struct upoauth_conf *);
void	conf_upoauth_print(FILE *, const struct upoauth_conf *);
void	conf_upoauth_free(struct upoauth_conf *);
int	conf_check_upoauth(struct conf_ctx *, const struct conf *);
/*
 * Check an OAuth URL: https, or http on loopback; a host; no query,
 * fragment, user information or white space (conf_oauth.c).
 */
int	conf_check_oauth_url(struct conf_ctx *, const config_setting_t *,
	    const char *what, const char *url);
/* The path of an http(s) URL, "/" when it has none (conf_upoauth.c). */
const char *conf_url_path(const char *);
/* The global oauth_client (conf_upoauth.c). */
int	conf_parse_oauth_client(struct conf_ctx *, const config_setting_t *,
	    struct conf *);
void	conf_oauth_client_print(FILE *, const struct oauth_client_conf *);
void	conf_oauth_client_free(struct oauth_client_conf *);
void	conf_oauth_match_free(struct oauth_match *);
void	conf_oauth_print(FILE *, const struct oauth_conf *);
void	conf_oauth_match_print(FILE *, const char *indent,
	    const struct oauth_match *);
/* A string vector as a JSON array, and back (-1 if a is not one). */
json_t	*conf_strv_to_json(char *const *);
int	conf_strv_from_json(const json_t *a, char ***out);
/* Print a string literal, and an array of them, in libconfig syntax. */
void	conf_print_string(FILE *, const char *);
void	conf_print_strv(FILE *, char *const *);

#endif
