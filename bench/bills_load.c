/*
 * bench/bills_load: the sync client of `bench/run --targets bills` (not a
 * test). libcurl (one keep-alive handle) + json-c.
 *
 *   bills_load sync BASE KEY LINK LIMIT [parse|scan]
 *	one full sync of LINK from no cursor, following the spec's loop
 *	rules: GET BASE/v1/account-links/LINK/bills/sync?limit=LIMIT[&cursor=C]
 *	with Authorization: Bearer KEY, C each page's next_cursor, until
 *	has_more is false; its added and modified bills upserted by id and its
 *	removed ids deleted in an in-memory set; the final next_cursor is
 *	what a client would persist (only then). How a page is read:
 *	  parse	(default) parsed whole with json-c into a tree, as a client
 *		with a DOM parser does (json-c costs ~20 ns a byte: most of the
 *		time of a 100,000-bill sync goes here);
 *	  scan	no JSON parse: the ids are found by their text (each entity
 *		in added/modified starts with {"id": "...", the server's
 *		stored jsonb text; removed holds {"id":"..."}), next_cursor
 *		and has_more read after "removed": what the service costs
 *		without the client's parser, as psql \copy to /dev/null
 *		parses nothing either.
 *	Prints "pages bills_received bills_in_set secs
 *	client_cpu_secs bytes_received": bills_in_set is the synced bill
 *	count, secs the wall time of the whole loop (CLOCK_MONOTONIC),
 *	client_cpu_secs this process's user+system time over the loop.
 *
 *   bills_load cursor BASE KEY LINK LIMIT PAGES
 *	follows PAGES pages as above and prints the next_cursor of the last
 *	one: the cursor of page PAGES + 1 (the depth bench's URL).
 *
 * Any HTTP status but 200, a page that does not parse, or more than
 * 1,000,000 pages: exit 1 with a message on stderr.
 */
#define _GNU_SOURCE	/* memmem */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/resource.h>

#include <curl/curl.h>
#include <json-c/json.h>

#define MAX_PAGES	1000000

struct buf {
	char	*p;
	size_t	 n, cap;
};

static size_t
on_body(char *d, size_t sz, size_t nm, void *u)
{
	struct buf *b = u;
	size_t n = sz * nm;

	if (b->n + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 1 << 20;
		char *p;

		while (cap < b->n + n + 1)
			cap *= 2;
		if ((p = realloc(b->p, cap)) == NULL)
			return 0;
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->n, d, n);
	b->n += n;
	b->p[b->n] = '\0';
	return n;
}

static double
mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double
cpu(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
	    (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

/* ---- the client's bill set: open addressing over the ids ----------------- */

static char **set;
static size_t set_cap, set_n;

static size_t
slot(const char *id)
{
	size_t h = 1469598103934665603u, i;

	for (const char *s = id; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211u;
	for (i = h & (set_cap - 1); set[i] != NULL && strcmp(set[i], id) != 0;
	    i = (i + 1) & (set_cap - 1))
		;
	return i;
}

static void
set_grow(void)
{
	char **old = set;
	size_t oc = set_cap;

	set_cap = oc ? oc * 2 : 1 << 16;
	if ((set = calloc(set_cap, sizeof(*set))) == NULL) {
		fprintf(stderr, "bills_load: out of memory\n");
		exit(1);
	}
	for (size_t i = 0; i < oc; i++)
		if (old[i] != NULL)
			set[slot(old[i])] = old[i];
	free(old);
}

static void
upsert(const char *id)
{
	size_t i;

	if ((set_n + 1) * 2 > set_cap)
		set_grow();
	i = slot(id);
	if (set[i] == NULL) {
		set[i] = strdup(id);
		set_n++;
	}
	/* a real client would store the entity here; the bench counts */
}

/* Delete with backward-shift, so lookups never stop at a hole. */
static void
remove_id(const char *id)
{
	size_t i, j, k;

	if (set_cap == 0 || set[i = slot(id)] == NULL)
		return;
	free(set[i]);
	set[i] = NULL;
	set_n--;
	for (j = (i + 1) & (set_cap - 1); set[j] != NULL; j = (j + 1) & (set_cap - 1)) {
		char *s = set[j];

		set[j] = NULL;
		k = slot(s);
		set[k] = s;
	}
}

/* ---- the loop -------------------------------------------------------------- */

struct page {
	long	 bills;		/* added + modified + removed */
	int	 has_more;
	char	*next_cursor;
};

/* The JSON string value after key (a "name": prefix) at or after from,
 * unescaped only as far as a cursor or id needs (none has escapes); NULL
 * when absent. */
static char *
scan_str(const char *from, const char *end, const char *key, const char **next)
{
	const char *p = memmem(from, (size_t)(end - from), key, strlen(key)), *q;

	if (p == NULL)
		return NULL;
	for (p += strlen(key); p < end && (*p == ' ' || *p == ':'); p++)
		;
	if (p >= end || *p != '"' || (q = memchr(p + 1, '"', (size_t)(end - p - 1))) == NULL)
		return NULL;
	if (next != NULL)
		*next = q + 1;
	return strndup(p + 1, (size_t)(q - p - 1));
}

/* scan mode: 0 and *pg from the body's text, or -1. */
static int
scan_page(const char *body, size_t n, struct page *pg)
{
	static const char rm_key[] = "\"removed\":[";
	const char *end = body + n, *rm = NULL, *p, *q;
	char *id, *more;

	/* the last "removed":[ : every entity comes before it */
	for (p = body; (q = memmem(p, (size_t)(end - p), rm_key, sizeof(rm_key) - 1)) != NULL;
	    p = q + 1)
		rm = q;
	if (rm == NULL)
		return -1;
	pg->bills = 0;
	for (p = body; (q = memmem(p, (size_t)(rm - p), "{\"id\": \"", 8)) != NULL; p = q + 8) {
		if ((id = scan_str(q, rm, "\"id\"", NULL)) == NULL)
			return -1;
		upsert(id);
		free(id);
		pg->bills++;
	}
	for (p = rm + sizeof(rm_key) - 1; *p == '{' && (id = scan_str(p, end, "\"id\"", &q)) != NULL;
	    p = q + (q[0] == '}') + (q[0] == '}' && q[1] == ',')) {
		remove_id(id);
		free(id);
		pg->bills++;
	}
	free(pg->next_cursor);
	pg->next_cursor = scan_str(rm, end, "\"next_cursor\"", NULL);
	if ((p = memmem(rm, (size_t)(end - rm), "\"has_more\":", 11)) == NULL)
		return -1;
	for (p += 11; *p == ' '; p++)
		;
	more = strndup(p, 4);
	pg->has_more = strcmp(more, "true") == 0;
	free(more);
	return pg->next_cursor != NULL ? 0 : -1;
}

static int scan_mode;

/* One page: 0 and *pg, or -1 (message written). */
static int
get_page(CURL *h, struct buf *b, const char *base, const char *link, const char *limit,
    const char *cursor, struct page *pg)
{
	static const char *const buckets[] = { "added", "modified", "removed" };
	struct json_object *root, *data, *v;
	char *url, *esc = NULL;
	long code = 0;
	CURLcode rc;
	size_t len;

	if (cursor != NULL)
		esc = curl_easy_escape(h, cursor, 0);
	len = strlen(base) + strlen(link) + strlen(limit) + (esc ? strlen(esc) : 0) + 64;
	url = malloc(len);
	snprintf(url, len, "%s/v1/account-links/%s/bills/sync?limit=%s%s%s", base, link, limit,
	    esc ? "&cursor=" : "", esc ? esc : "");
	curl_free(esc);
	b->n = 0;
	curl_easy_setopt(h, CURLOPT_URL, url);
	rc = curl_easy_perform(h);
	free(url);
	if (rc != CURLE_OK) {
		fprintf(stderr, "bills_load: %s\n", curl_easy_strerror(rc));
		return -1;
	}
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
	if (code != 200 || b->p == NULL) {
		fprintf(stderr, "bills_load: HTTP %ld: %.300s\n", code, b->p ? b->p : "");
		return -1;
	}
	if (scan_mode) {
		if (scan_page(b->p, b->n, pg) == 0)
			return 0;
		fprintf(stderr, "bills_load: not a sync page: %.300s\n", b->p);
		return -1;
	}
	if ((root = json_tokener_parse(b->p)) == NULL ||
	    !json_object_object_get_ex(root, "data", &data)) {
		fprintf(stderr, "bills_load: not a sync page: %.300s\n", b->p);
		json_object_put(root);
		return -1;
	}
	pg->bills = 0;
	for (int k = 0; k < 3; k++) {
		struct json_object *arr, *id;
		size_t n;

		if (!json_object_object_get_ex(data, buckets[k], &arr) ||
		    !json_object_is_type(arr, json_type_array)) {
			fprintf(stderr, "bills_load: page without %s\n", buckets[k]);
			json_object_put(root);
			return -1;
		}
		n = json_object_array_length(arr);
		pg->bills += (long)n;
		for (size_t i = 0; i < n; i++) {
			if (!json_object_object_get_ex(json_object_array_get_idx(arr, i), "id", &id)) {
				fprintf(stderr, "bills_load: an entry without id\n");
				json_object_put(root);
				return -1;
			}
			if (k < 2)
				upsert(json_object_get_string(id));
			else
				remove_id(json_object_get_string(id));
		}
	}
	pg->has_more = json_object_object_get_ex(data, "has_more", &v) && json_object_get_boolean(v);
	free(pg->next_cursor);
	pg->next_cursor = json_object_object_get_ex(data, "next_cursor", &v) ?
	    strdup(json_object_get_string(v)) : NULL;
	json_object_put(root);
	if (pg->next_cursor == NULL) {
		fprintf(stderr, "bills_load: page without next_cursor\n");
		return -1;
	}
	return 0;
}

int
main(int argc, char **argv)
{
	struct curl_slist *hdr = NULL;
	struct buf b = { 0 };
	struct page pg = { 0 };
	char *auth, *cursor = NULL;
	long pages = 0, bills = 0, max_pages = MAX_PAGES;
	double t0, c0;
	curl_off_t dl;
	double bytes = 0;
	CURL *h;
	int sync;

	if ((argc == 6 || argc == 7) && strcmp(argv[1], "sync") == 0 &&
	    (argc == 6 || strcmp(argv[6], "parse") == 0 || strcmp(argv[6], "scan") == 0)) {
		sync = 1;
		scan_mode = argc == 7 && strcmp(argv[6], "scan") == 0;
	}
	else if (argc == 7 && strcmp(argv[1], "cursor") == 0 && (max_pages = atol(argv[6])) > 0)
		sync = 0;
	else {
		fprintf(stderr, "usage: bills_load sync BASE KEY LINK LIMIT [parse|scan]\n"
		    "       bills_load cursor BASE KEY LINK LIMIT PAGES\n");
		return 2;
	}
	curl_global_init(CURL_GLOBAL_DEFAULT);
	h = curl_easy_init();
	auth = malloc(strlen(argv[3]) + 32);
	sprintf(auth, "Authorization: Bearer %s", argv[3]);
	hdr = curl_slist_append(hdr, auth);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdr);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, &b);
	curl_easy_setopt(h, CURLOPT_TIMEOUT, 60L);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	t0 = mono();
	c0 = cpu();
	do {
		if (pages >= max_pages) {
			fprintf(stderr, "bills_load: still has_more after %ld pages\n", pages);
			return 1;
		}
		if (get_page(h, &b, argv[2], argv[4], argv[5], cursor, &pg) != 0)
			return 1;
		pages++;
		bills += pg.bills;
		if (curl_easy_getinfo(h, CURLINFO_SIZE_DOWNLOAD_T, &dl) == CURLE_OK)
			bytes += (double)dl;
		free(cursor);
		cursor = strdup(pg.next_cursor);
	} while (pg.has_more && (sync || pages < max_pages));
	if (sync)
		printf("%ld %ld %zu %.3f %.3f %.0f\n", pages, bills, set_n, mono() - t0, cpu() - c0,
		    bytes);
	else if (pages < max_pages) {
		fprintf(stderr, "bills_load: only %ld pages\n", pages);
		return 1;
	} else
		printf("%s\n", cursor);
	free(cursor);
	free(pg.next_cursor);
	free(b.p);
	free(auth);
	curl_slist_free_all(hdr);
	curl_easy_cleanup(h);
	curl_global_cleanup();
	return 0;
}
