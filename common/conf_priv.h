/*
 * What the configuration's parser, printer and JSON form share; private
 * to common/conf*.c.
 */
#ifndef MCPS_CONF_PRIV_H
#define MCPS_CONF_PRIV_H

#include <stddef.h>

/* Names of the enums' values, indexed by value. */
extern const char *const conf_transport_names[];
extern const char *const conf_strategy_names[];
extern const char *const conf_isolation_names[];

/* Free a NULL-terminated string vector (NULL is fine). */
void	conf_strv_free(char **);
/* Compare two string vectors (either may be NULL). */
int	conf_strv_equal(char *const *, char *const *);
/* Look a name up in a table of n names; -1 if absent. */
int	conf_lookup_name(const char *const *names, size_t n, const char *);

#endif
