/*
 * Biller logos (billers_logos.h): the catalog's logo_url is never shown to
 * an end user's browser. bds-jobs fetches it (lib/jobs/jobs_logos.c, the
 * job kind BILLERS_JOB_LOGO) and hands the bytes here; the logos shipped
 * beside the catalog CSV (data/logos/<biller_id>.<ext>) come here from
 * `bdsctl billers import`. Either way the bytes must be at most
 * BILLERS_LOGO_MAX and one of the four image types libmagic recognises
 * from the content (never from a name or a Content-Type); they are written
 * to <data_dir>/logos/<biller_id>.<ext> (a temporary file renamed over the
 * old one, core/files.h) and recorded in biller_logos, which the picker reads for
 * logo_src. The link host serves the directory (nginx/bds-link-host.conf:
 * its own Content-Security-Policy, nosniff, a long cache; the URL carries
 * the hash, so a new logo is a new URL).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include <magic.h>

#include "billers/billers.h"
#include "billers/billers_logos.h"
#include "core/arena.h"
#include "core/config.h"
#include "core/crypto.h"
#include "core/db.h"
#include "core/files.h"
#include "core/jobq.h"
#include "core/req.h"

enum { LG_PUT, LG_SOURCE, LG_QUEUE_ALL, LG_QUEUE_ONE, LG_IDS, LG__MAX };
static struct db_stmt stmts[LG__MAX] = {
	[LG_PUT] = { "billers_logo_put",
	    "INSERT INTO biller_logos AS l (biller_id, ext, source_url, sha256, size)"
	    " VALUES ($1, $2, $3, $4, $5::int) ON CONFLICT (biller_id) DO UPDATE SET"
	    " ext = EXCLUDED.ext, source_url = EXCLUDED.source_url, sha256 = EXCLUDED.sha256,"
	    " size = EXCLUDED.size, stored_at = now()" },
	/* what the fetch job fetches: the biller's logo_url now */
	[LG_SOURCE] = { "billers_logo_source",
	    "SELECT logo_url FROM billers WHERE id = $1 AND logo_url IS NOT NULL" },
	/* the billers whose logo_url is not the stored logo's source */
	[LG_QUEUE_ALL] = { "billers_logo_due",
	    "SELECT b.id FROM billers b LEFT JOIN biller_logos l ON l.biller_id = b.id"
	    " WHERE b.logo_url IS NOT NULL AND b.status <> 'UNSUPPORTED'"
	    " AND l.source_url IS DISTINCT FROM b.logo_url ORDER BY b.id" },
	[LG_QUEUE_ONE] = { "billers_logo_one",
	    "SELECT b.id FROM billers b WHERE b.id = $1 AND b.logo_url IS NOT NULL" },
	[LG_IDS] = { "billers_logo_ids",
	    "SELECT 1 FROM billers WHERE id = $1" },
};
const struct db_stmt_set billers_logos_stmt_set = { "billers_logos", stmts, LG__MAX };

/* The four types a logo may be, as libmagic names them, and the
 * extension each is stored (and served) under. */
static const struct {
	const char	*mime, *ext;
} types[] = {
	{ "image/png", "png" },
	{ "image/jpeg", "jpg" },
	{ "image/webp", "webp" },
	{ "image/svg+xml", "svg" },
};
#define NTYPES	(sizeof(types) / sizeof(types[0]))

/* What an SVG may not hold even though the page shows it as an image (no
 * script runs there) and its own CSP forbids everything: a file with
 * these is not a logo. Compared case-insensitively. */
static const char *const svg_refused[] = { "<script", "<foreignobject", "<!entity",
	"javascript:", "<iframe", "<embed", "<object", NULL };

static int
contains_ci(const unsigned char *b, size_t len, const char *needle)
{
	size_t n = strlen(needle);

	for (size_t i = 0; i + n <= len; i++)
		if (strncasecmp((const char *)b + i, needle, n) == 0)
			return 1;
	return 0;
}

const char *
billers_logo_type(const unsigned char *bytes, size_t len, const char **why)
{
	const char *mime, *ext = NULL;
	magic_t m;

	if (len == 0) {
		*why = "empty";
		return NULL;
	}
	if (len > BILLERS_LOGO_MAX) {
		*why = "larger than the logo size cap";
		return NULL;
	}
	if ((m = magic_open(MAGIC_MIME_TYPE | MAGIC_NO_CHECK_COMPRESS | MAGIC_ERROR)) == NULL) {
		*why = "libmagic is not available";
		return NULL;
	}
	if (magic_load(m, NULL) != 0 || (mime = magic_buffer(m, bytes, len)) == NULL) {
		magic_close(m);
		*why = "libmagic could not read its database";
		return NULL;
	}
	for (size_t i = 0; i < NTYPES; i++)
		if (strcmp(mime, types[i].mime) == 0)
			ext = types[i].ext;
	magic_close(m);
	if (ext == NULL) {
		*why = "not a PNG, JPEG, WebP or SVG image";
		return NULL;
	}
	if (strcmp(ext, "svg") == 0)
		for (size_t i = 0; svg_refused[i] != NULL; i++)
			if (contains_ci(bytes, len, svg_refused[i])) {
				*why = "an SVG with scripts, entities or embedded content";
				return NULL;
			}
	return ext;
}

/* <data_dir>/logos, made (0755: the logos are public, nginx's workers
 * read them whatever their group) when missing. 0, -1. */
static int
logos_dir(const struct config *cfg, const char *dir)
{
	struct stat st;

	if (mkdir(cfg->data_dir, 0750) != 0 && errno != EEXIST)
		return -1;
	if (mkdir(dir, 0755) != 0) {
		if (errno != EEXIST)
			return -1;
		return stat(dir, &st) == 0 && S_ISDIR(st.st_mode) ? 0 : -1;
	}
	return chmod(dir, 0755);
}

int
billers_logo_store(const struct config *cfg, struct db *d, struct arena *a,
    const char *biller_id, const unsigned char *bytes, size_t len, const char *source_url,
    const char **why)
{
	const char *ext, *dir, *path, *p[5];
	unsigned char md[32];
	char hex[65];

	if (!crypto_id_valid(biller_id, "blr", 0)) {
		*why = "not a biller id";
		return -1;
	}
	if ((ext = billers_logo_type(bytes, len, why)) == NULL)
		return -1;
	dir = arena_printf(a, "%s/logos", cfg->data_dir);
	path = arena_printf(a, "%s/%s.%s", dir, biller_id, ext);
	if (logos_dir(cfg, dir) != 0 || files_write_atomic(a, dir, path, bytes, len, 0644) != 0) {
		*why = arena_printf(a, "cannot write the logo file: %s", strerror(errno));
		return -1;
	}
	/* the same biller's logo of another type is not served any more */
	for (size_t i = 0; i < NTYPES; i++)
		if (strcmp(types[i].ext, ext) != 0)
			unlink(arena_printf(a, "%s/%s.%s", dir, biller_id, types[i].ext));
	crypto_sha256(bytes, len, md);
	for (int i = 0; i < 32; i++)
		snprintf(hex + 2 * i, 3, "%02x", md[i]);
	p[0] = biller_id;
	p[1] = ext;
	p[2] = source_url;
	p[3] = hex;
	p[4] = arena_printf(a, "%zu", len);
	if (db_exec(d, a, &stmts[LG_PUT], 5, p) == NULL) {
		*why = "database failure";
		return -1;
	}
	return 0;
}

const char *
billers_logo_source(struct req *r, const char *biller_id, int *err)
{
	const char *p[1] = { biller_id };
	PGresult *res;

	*err = 0;
	if ((res = db_query(r, &stmts[LG_SOURCE], 1, p)) == NULL) {
		*err = 1;
		return NULL;
	}
	return PQntuples(res) == 1 ? arena_strdup(r->arena, PQgetvalue(res, 0, 0)) : NULL;
}

/* ---- bdsctl ---- */

/* The file's bytes (malloc'ed, at most BILLERS_LOGO_MAX + 1 read), NULL. */
static unsigned char *
slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	unsigned char *b;

	if (f == NULL)
		return NULL;
	if ((b = malloc(BILLERS_LOGO_MAX + 1)) != NULL)
		*len = fread(b, 1, BILLERS_LOGO_MAX + 1, f);
	fclose(f);
	return b;
}

long long
billers_logos_load_dir(const struct config *cfg, struct db *d, struct arena *a,
    const char *csv_path)
{
	char *copy = arena_strdup(a, csv_path);
	const char *dir = arena_printf(a, "%s/logos", dirname(copy)), *why, *id;
	struct dirent *e;
	long long n = 0;
	DIR *dp;

	if ((dp = opendir(dir)) == NULL)
		return errno == ENOENT ? 0 : -1;
	while ((e = readdir(dp)) != NULL) {
		const char *dot = strrchr(e->d_name, '.');
		unsigned char *b;
		size_t len = 0;
		PGresult *res;

		if (e->d_name[0] == '.' || dot == NULL)
			continue;
		id = arena_strndup(a, e->d_name, (size_t)(dot - e->d_name));
		if (!crypto_id_valid(id, "blr", 0))
			continue;
		/* only the catalog's billers */
		if ((res = db_exec(d, a, &stmts[LG_IDS], 1, &id)) == NULL) {
			closedir(dp);
			return -1;
		}
		if (PQntuples(res) != 1)
			continue;
		if ((b = slurp(arena_printf(a, "%s/%s", dir, e->d_name), &len)) == NULL) {
			closedir(dp);
			return -1;
		}
		if (billers_logo_store(cfg, d, a, id, b, len, NULL, &why) != 0) {
			fprintf(stderr, "bdsctl: billers: logo %s/%s: %s\n", dir, e->d_name, why);
			free(b);
			closedir(dp);
			return -1;
		}
		free(b);
		n++;
	}
	closedir(dp);
	return n;
}

long long
billers_logos_queue(const struct config *cfg, struct db *d, struct arena *a,
    const char *biller_id)
{
	struct req r;
	PGresult *res;
	long long n = 0;

	req_init_operator(&r, cfg, d, a);
	if (biller_id != NULL)
		res = db_exec(d, a, &stmts[LG_QUEUE_ONE], 1, &biller_id);
	else
		res = db_exec(d, a, &stmts[LG_QUEUE_ALL], 0, NULL);
	if (res == NULL)
		return -1;
	for (int i = 0; i < PQntuples(res); i++, n++)
		if (jobq_add(&r, BILLERS_JOB_LOGO, NULL, NULL, PQgetvalue(res, i, 0), NULL, 0) != 0)
			return -1;
	return n;
}

int
billers_logos_import(const struct config *cfg, struct db *d, struct arena *a,
    const char *csv_path, int fetch)
{
	long long loaded = billers_logos_load_dir(cfg, d, a, csv_path), queued = 0;

	if (loaded < 0 || (fetch && (queued = billers_logos_queue(cfg, d, a, NULL)) < 0)) {
		fprintf(stderr, "billers import: logos: %s\n", loaded < 0 ? "not loaded" :
		    db_errmsg(d));
		return -1;
	}
	printf("billers import: %lld logos stored", loaded);
	if (fetch)
		printf(", %lld logo fetches queued", queued);
	printf("\n");
	return 0;
}

int
billers_logos_fetch(const struct config *cfg, struct db *d, struct arena *a,
    const char *biller_id)
{
	long long n;

	if (biller_id != NULL && !crypto_id_valid(biller_id, "blr", 0)) {
		fprintf(stderr, "billers fetch-logos: %s is not a biller id\n", biller_id);
		return -1;
	}
	if ((n = billers_logos_queue(cfg, d, a, biller_id)) < 0) {
		fprintf(stderr, "billers fetch-logos: database: %s\n", db_errmsg(d));
		return -1;
	}
	if (biller_id != NULL && n == 0) {
		fprintf(stderr, "billers fetch-logos: no biller %s with a logo_url\n", biller_id);
		return -1;
	}
	printf("billers fetch-logos: %lld queued\n", n);
	return 0;
}
