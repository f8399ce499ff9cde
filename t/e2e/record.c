/* The exchange and delivery recorder of the e2e suites (record.h). */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <json-c/json.h>

#include "harness.h"
#include "receiver.h"
#include "record.h"

/* Members whose string values are credentials, wherever they appear. */
static const char *const secret_keys[] = {
	"password", "new_password", "newPassword", "current_password", "currentPassword",
	"old_password", "oldPassword", "access_token", "accessToken", "refresh_token",
	"refreshToken", "id_token", "idToken", "client_secret", "clientSecret", "secret",
	"api_key", "apiKey", "key", "public_token", "publicToken", "session_token",
	"ticket", "token", "signing_secret", "webhook_secret", "username",
	"credentials", "pan", "cvv", "answer", NULL
};

/* Values that are credentials whatever their member is called. */
static const char *const secret_prefixes[] = {
	"bds_", "eyJ", "whsec_", NULL
};

static void write_line(const char *kind, struct json_object *line);

/*
 * Every secret masked is also noted, unmasked, in DIR/<suite>.secrets.jsonl
 * ({"key": member or "embedded" or "bearer", "value": ...}): the list
 * scripts/secrets-scan searches the suite's dumps and logs for.
 */
static void
note_secret(const char *key, const char *value, size_t len)
{
	struct json_object *line;

	if (len == 0)
		return;
	line = json_object_new_object();
	json_object_object_add(line, "key", json_object_new_string(key ? key : ""));
	json_object_object_add(line, "value", json_object_new_string_len(value, (int)len));
	write_line("secrets", line);
	json_object_put(line);
}

static int
is_secret_key(const char *k)
{
	for (size_t i = 0; secret_keys[i] != NULL; i++)
		if (strcmp(k, secret_keys[i]) == 0)
			return 1;
	return 0;
}

static int
is_secret_value(const char *v)
{
	for (size_t i = 0; secret_prefixes[i] != NULL; i++)
		if (strncmp(v, secret_prefixes[i], strlen(secret_prefixes[i])) == 0)
			return 1;
	return 0;
}

/*
 * The masked copy of a secret: the prefix up to its last '_' among the
 * first 24 characters kept (bds_sk_sandbox_, bds_lat_), every other letter
 * or digit an x, the rest (dots of a JWT, dashes) as it was.
 */
static char *
mask(const char *key, const char *s)
{
	char *m = strdup(s);
	size_t keep = 0;

	if (m == NULL)
		abort();
	note_secret(key, s, strlen(s));
	for (size_t i = 0; m[i] != '\0' && i < 24; i++)
		if (m[i] == '_')
			keep = i + 1;
	for (size_t i = keep; m[i] != '\0'; i++)
		if (isalnum((unsigned char)m[i]))
			m[i] = 'x';
	return m;
}

/*
 * A credential inside a longer string (a connect URL's #ticket=bds_tkt_...,
 * a hosted_url): each bds_ token in it masked like a whole one. NULL when
 * there is none.
 */
static char *
mask_embedded(const char *s)
{
	const char *hit = strstr(s, "bds_");
	char *m;

	if (hit == NULL)
		return NULL;
	if ((m = strdup(s)) == NULL)
		abort();
	for (char *t = m + (hit - s); t != NULL; t = strstr(t, "bds_")) {
		size_t len = strspn(t, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
		    "0123456789_"), keep = 0;

		for (size_t i = 0; i < len && i < 24; i++)
			if (t[i] == '_')
				keep = i + 1;
		/* a prefix with little or nothing after it ("bds_pub_" sent to
		 * test a malformed token) holds no secret */
		if (len - keep >= 8)
			note_secret("embedded", t, len);
		for (size_t i = keep; i < len; i++)
			if (isalnum((unsigned char)t[i]))
				t[i] = 'x';
		t += len > 0 ? len : 1;
	}
	return m;
}

static void mask_tree(struct json_object *o);

static void
mask_member(const char *key, struct json_object *v)
{
	if (json_object_is_type(v, json_type_string)) {
		const char *s = json_object_get_string(v);

		if ((key != NULL && is_secret_key(key)) || is_secret_value(s) ||
		    (key != NULL && strcmp(key, "code") == 0 && *s != '\0' &&
		    strspn(s, "0123456789") == strlen(s))) {	/* e-mail codes */
			char *m = mask(key, s);

			json_object_set_string(v, m);
			free(m);
		} else {
			char *m = mask_embedded(s);

			if (m != NULL) {
				json_object_set_string(v, m);
				free(m);
			}
		}
	} else if (key != NULL && strcmp(key, "credentials") == 0 &&
	    json_object_is_type(v, json_type_object)) {
		/* a biller login given as an object: every string in it */
		json_object_object_foreach(v, k, sub) {
			if (json_object_is_type(sub, json_type_string)) {
				char *m = mask(k, json_object_get_string(sub));

				json_object_set_string(sub, m);
				free(m);
			}
		}
	} else {
		mask_tree(v);
	}
}

static void
mask_tree(struct json_object *o)
{
	if (json_object_is_type(o, json_type_object)) {
		json_object_object_foreach(o, k, v)
			mask_member(k, v);
	} else if (json_object_is_type(o, json_type_array)) {
		for (size_t i = 0; i < json_object_array_length(o); i++)
			mask_member(NULL, json_object_array_get_idx(o, i));
	}
}

/* The body as masked JSON, or null with its length when it is not JSON. */
static void
add_body(struct json_object *line, const char *key, const void *body, size_t len)
{
	struct json_object *o = NULL;

	if (body != NULL && len > 0 && len < 4 * 1024 * 1024) {
		char *copy = strndup(body, len);

		if (copy == NULL)
			abort();
		o = json_tokener_parse(copy);
		free(copy);
	}
	if (o != NULL)
		mask_tree(o);
	json_object_object_add(line, key, o);
	if (o == NULL && len > 0)
		json_object_object_add(line, key[0] == 'r' ? "request_bytes" : "body_bytes",
		    json_object_new_int64((int64_t)len));
}

/* The header names worth checking against the document, lower case. */
static int
kept_header(const char *name)
{
	static const char *const kept[] = {
		"content-type", "etag", "retry-after", "cache-control", "location",
		"ratelimit", "ratelimit-policy", "ratelimit-limit", "ratelimit-remaining",
		"ratelimit-reset", "access-control-allow-origin", "x-request-id",
		"idempotent-replayed", "content-disposition", NULL
	};

	for (size_t i = 0; kept[i] != NULL; i++)
		if (strcasecmp(name, kept[i]) == 0)
			return 1;
	return 0;
}

/* One header into the line's headers object, its name in lower case. */
static void
add_header(struct json_object *hs, const char *name, const char *value)
{
	char lower[64];
	size_t j;

	for (j = 0; name[j] != '\0' && j + 1 < sizeof(lower); j++)
		lower[j] = (char)tolower((unsigned char)name[j]);
	lower[j] = '\0';
	json_object_object_add(hs, lower, json_object_new_string(value));
}

/* Append one line to DIR/<suite>.<kind>.jsonl in one write. */
static void
write_line(const char *kind, struct json_object *line)
{
	const char *dir = getenv("BDS_E2E_RECORD"), *s;
	char path[4096];
	int fd;

	if (dir == NULL || *dir == '\0')
		return;
	snprintf(path, sizeof(path), "%s/%s.%s.jsonl", dir, program_invocation_short_name,
	    kind);
	s = json_object_to_json_string_ext(line, JSON_C_TO_STRING_PLAIN |
	    JSON_C_TO_STRING_NOSLASHESCAPE);
	if ((fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644)) == -1)
		return;
	{
		size_t n = strlen(s);
		char *buf = malloc(n + 2);

		if (buf != NULL) {
			memcpy(buf, s, n);
			buf[n] = '\n';
			if (write(fd, buf, n + 1) != (ssize_t)(n + 1))
				(void)0;	/* best effort: the checker sees a short file */
			free(buf);
		}
	}
	close(fd);
}

/* What kind of credential a request carried: none, or the token's family. */
static const char *
auth_kind(const char *const headers[])
{
	for (size_t i = 0; headers != NULL && headers[i] != NULL; i++) {
		const char *h = headers[i];

		if (strncasecmp(h, "Authorization:", 14) != 0)
			continue;
		h += 14;
		while (*h == ' ')
			h++;
		if (strncasecmp(h, "Bearer ", 7) != 0)
			return "other";
		h += 7;
		/* a suite sends one token many times: noted when it changes */
		{
			static char last[1024];

			if (strncmp(last, h, sizeof(last) - 1) != 0) {
				note_secret("bearer", h, strlen(h));
				snprintf(last, sizeof(last), "%s", h);
			}
		}
		if (strncmp(h, "eyJ", 3) == 0)
			return "jwt";
		if (strncmp(h, "bds_lat_", 8) == 0)
			return "link_access_token";
		if (strncmp(h, "bds_lst_", 8) == 0)
			return "session_token";
		if (strncmp(h, "lt_", 3) == 0)
			return "link_token";
		return "key";
	}
	return "none";
}

void
record_exchange(const char *method, const char *host, const char *path,
    const char *const headers[], const void *body, size_t body_len,
    const struct harness_resp *r)
{
	struct json_object *line, *hs;
	const char *dir = getenv("BDS_E2E_RECORD");

	if (dir == NULL || *dir == '\0' || r == NULL || r->status == 0)
		return;
	line = json_object_new_object();
	hs = json_object_new_object();
	json_object_object_add(line, "method", json_object_new_string(method));
	json_object_object_add(line, "host", json_object_new_string(host ? host : ""));
	{
		char *m = mask_embedded(path);

		json_object_object_add(line, "path", json_object_new_string(m ? m : path));
		free(m);
	}
	json_object_object_add(line, "auth", json_object_new_string(auth_kind(headers)));
	for (size_t i = 0; headers != NULL && headers[i] != NULL; i++)
		if (strncasecmp(headers[i], "Content-Type:", 13) == 0)
			json_object_object_add(line, "request_content_type",
			    json_object_new_string(headers[i] + 13 + strspn(headers[i] + 13, " ")));
	add_body(line, "request", body, body_len);
	json_object_object_add(line, "status", json_object_new_int((int)r->status));
	for (size_t i = 0; i < r->nheaders; i++)
		if (kept_header(r->headers[i].name))
			add_header(hs, r->headers[i].name, r->headers[i].value);
	json_object_object_add(line, "headers", hs);
	add_body(line, "body", r->body, r->body_len);
	write_line("exchanges", line);
	json_object_put(line);
}

void
record_delivery(const struct receiver_req *q)
{
	struct json_object *line, *hs;
	const char *dir = getenv("BDS_E2E_RECORD");

	if (dir == NULL || *dir == '\0' || q == NULL)
		return;
	line = json_object_new_object();
	hs = json_object_new_object();
	json_object_object_add(line, "method", json_object_new_string(q->method));
	json_object_object_add(line, "target", json_object_new_string(q->target));
	for (size_t i = 0; i < q->nheaders; i++)
		add_header(hs, q->headers[i].name, q->headers[i].value);
	json_object_object_add(line, "headers", hs);
	add_body(line, "body", q->body, q->body_len);
	write_line("deliveries", line);
	json_object_put(line);
}
