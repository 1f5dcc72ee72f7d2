/* SPDX-License-Identifier: ISC */
/*
 * Fuzz what mcp-idp reads from an authorization server beyond jansson
 * (idp/idp_meta.c): a Cache-Control value, a metadata document checked
 * against the configured issuer, and an issuer's discovery URLs.  The
 * first byte chooses.  A max-age is -1 or within [0, 86401], and the
 * refresh it makes within [300, 86400]; accepted metadata names exactly
 * the issuer and only URLs that may be fetched; a refusal says why in
 * words without '"' or '\'; every discovery URL may be fetched and has
 * its .well-known segment.
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "idp.h"

#define CHECK(x) do {							\
	if (!(x)) {							\
		fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__,	\
		    __LINE__, #x);					\
		abort();						\
	}								\
} while (0)

#define ISSUER	"https://idp.example.com/realms/x"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static void
fuzz_max_age(const char *p, size_t len)
{
	long		age = idp_max_age(p, len);
	unsigned int	r = idp_refresh_after(age, 0);

	CHECK(age == -1 || (age >= 0 && age <= IDP_MAX_AGE_MAX + 1));
	CHECK(r >= IDP_MAX_AGE_MIN && r <= IDP_MAX_AGE_MAX);
}

static void
fuzz_metadata(const char *p, size_t len)
{
	json_t		*md;
	const char	*jwks, *intro;
	char		 why[IDP_WHY_MAX], w2[IDP_WHY_MAX];

	if ((md = json_loadb(p, len, JSON_DECODE_ANY | JSON_ALLOW_NUL,
	    NULL)) == NULL)
		return;
	why[0] = '\0';
	if (idp_metadata_check(md, ISSUER, &jwks, &intro, why,
	    sizeof why) == 0) {
		CHECK(strcmp(json_string_value(json_object_get(md, "issuer")),
		    ISSUER) == 0);
		CHECK(jwks == NULL || idp_url_allowed(jwks, w2, sizeof w2));
		CHECK(intro == NULL || idp_url_allowed(intro, w2, sizeof w2));
	} else {
		CHECK(why[0] != '\0');
		CHECK(strpbrk(why, "\"\\") == NULL);
	}
	json_decref(md);
}

static void
fuzz_discovery(const char *p, size_t len)
{
	char	*s, *urls[IDP_DISCOVERY_MAX], why[IDP_WHY_MAX];
	int	 i, n;

	s = malloc(len + 1);
	CHECK(s != NULL);
	memcpy(s, p, len);
	s[len] = '\0';
	n = idp_discovery_urls(s, urls, why, sizeof why);
	CHECK(n == -1 || n == 2 || n == 3);
	for (i = 0; i < n; i++) {
		CHECK(idp_url_allowed(urls[i], why, sizeof why));
		CHECK(strstr(urls[i], "/.well-known/") != NULL);
		free(urls[i]);
	}
	free(s);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char	*p = (const char *)data + 1;

	if (size < 1)
		return (0);
	switch (data[0] % 3) {
	case 0:
		fuzz_max_age(p, size - 1);
		break;
	case 1:
		fuzz_metadata(p, size - 1);
		break;
	default:
		fuzz_discovery(p, size - 1);
		break;
	}
	return (0);
}
