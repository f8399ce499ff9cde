/*
 * The document store: content-addressed files under
 * <data_dir>/statements/<aa>/<sha256>.pdf. Only bds-jobs writes here; nginx
 * reads (the internal location /_statements/), the API never opens a file.
 * A name is its content's hash, so a file is written once and never
 * changed: two runners storing the same document race harmlessly (the
 * rename of identical bytes), and a transaction that rolls back after the
 * write leaves an unreferenced file, never a reference to a missing one.
 *
 * Such files (and those of a statement's earlier revision) are removed by
 * bills_docs_sweep (bdsctl jobs, once a day). A file is removed only when it
 * is older than DOCS_ORPHAN_AGE_S and no row names its hash. A put that
 * finds its file already there refreshes its mtime, so a reference about
 * to commit always has a young file. Each <aa> directory is flock'ed, shared
 * by a put and exclusive by the sweep: the sweep's look at the mtime, its
 * query and its unlink happen with no put in between.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/arena.h"
#include "core/config.h"
#include "core/crypto.h"
#include "core/db.h"
#include "core/files.h"
#include "core/log.h"
#include "bills/bills_statement.h"

/* A file younger than this may be the document of a retrieval that has not
 * committed yet (a job holds its lease for minutes): never removed. */
#define DOCS_ORPHAN_AGE_S	(24 * 3600)
/* The sweep walks every file: at most once this often (statements/.swept). */
#define DOCS_SWEEP_EVERY_S	(24 * 3600)
/* Hashes asked about in one query. */
#define DOCS_SWEEP_BATCH	256

enum { DOC_UNREFERENCED, DOC__MAX };

static struct db_stmt stmts[DOC__MAX] = {
	/* The hashes of $1 no row names: every column that holds a document's
	 * hash (a new one, e.g. of bill imports, belongs here). */
	[DOC_UNREFERENCED] = { "bills_docs_unreferenced",
	    "SELECT s FROM unnest($1::text[]) s"
	    " WHERE NOT EXISTS (SELECT 1 FROM bills b WHERE b.statement_sha256 = s)"
	    "   AND NOT EXISTS (SELECT 1 FROM portal_unstructured u"
	    "                    WHERE u.document_sha256 = s)"
	    /* an open import's copy: the statement of the bill it may become */
	    "   AND NOT EXISTS (SELECT 1 FROM bill_imports i WHERE i.document_sha256 = s"
	    "                    AND i.status NOT IN ('CANCELLED', 'EXPIRED', 'REJECTED'))" },
};
const struct db_stmt_set bills_docs_stmt_set = { "bills_docs", stmts, DOC__MAX };

/*
 * mkdir 0750 when missing. A set-group-ID parent passes its group (nginx's)
 * and the bit on; chmod keeps the bit and sets the mode whatever the umask.
 * 1 made, 0 there already, -1 failure.
 */
static int
mkdir_0750(const char *path)
{
	struct stat st;

	if (mkdir(path, 0750) != 0) {
		if (errno != EEXIST)
			return -1;
		return stat(path, &st) == 0 && S_ISDIR(st.st_mode) ? 0 : -1;
	}
	if (stat(path, &st) != 0 || chmod(path, (st.st_mode & S_ISGID) | 0750) != 0)
		return -1;
	return 1;
}

/* The directory open and flock'ed (LOCK_SH or LOCK_EX): the fd, whose close
 * unlocks; -1. */
static int
dir_lock(const char *path, int how)
{
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	while (flock(fd, how) != 0)
		if (errno != EINTR) {
			close(fd);
			return -1;
		}
	return fd;
}

/*
 * The document's <aa> directory flock'ed shared (dir_lock), made with its
 * parents only when missing: a put of a known directory costs no mkdir.
 * *made is 1 when the <aa> directory is new. The fd, -1.
 */
static int
put_lock(const struct config *cfg, const char *top, const char *dir, int *made)
{
	int lock;

	*made = 0;
	if ((lock = dir_lock(dir, LOCK_SH)) >= 0 || errno != ENOENT)
		return lock;
	if (mkdir_0750(cfg->data_dir) < 0 || mkdir_0750(top) < 0 || (*made = mkdir_0750(dir)) < 0)
		return -1;
	return dir_lock(dir, LOCK_SH);
}

static int
is_sha_hex(const char *s)
{
	size_t i;

	for (i = 0; s[i] != '\0'; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return 0;
	return i == 64;
}

const char *
bills_docs_path(struct arena *a, const struct config *cfg, const char *sha)
{
	if (sha == NULL || !is_sha_hex(sha))
		return NULL;
	return arena_printf(a, "%s/statements/%.2s/%s.pdf", cfg->data_dir, sha, sha);
}

const char *
bills_docs_put(struct arena *a, const struct config *cfg, const void *bytes, size_t len)
{
	unsigned char md[32];
	const char *sha, *top, *dir, *path;
	struct stat st;
	int made, lock;

	if (len == 0 || (long long)len > BILLS_DOC_MAX) {
		log_msg("error", "document store: refused a document of %zu bytes", len);
		return NULL;
	}
	crypto_sha256(bytes, len, md);
	sha = crypto_hex_encode(a, md, sizeof(md));
	top = arena_printf(a, "%s/statements", cfg->data_dir);
	dir = arena_printf(a, "%s/%.2s", top, sha);
	path = bills_docs_path(a, cfg, sha);
	if ((lock = put_lock(cfg, top, dir, &made)) < 0) {
		log_msg("error", "document store: directory %s: %s", dir,
		    strerror(errno));
		return NULL;
	}
	/* Same name, same bytes: an existing file of the right size is it
	 * (made young again: the sweep leaves it to the reference to come). */
	if (stat(path, &st) == 0 && S_ISREG(st.st_mode) && (size_t)st.st_size == len &&
	    utimensat(AT_FDCWD, path, NULL, 0) == 0) {
		close(lock);
		return sha;
	}
	/* a new <aa> directory's own entry must be durable too */
	if (files_write_atomic(a, dir, path, bytes, len, 0640) != 0 ||
	    (made && files_fsync_dir(top) != 0)) {
		log_msg("error", "document store: write %s: %s", path, strerror(errno));
		close(lock);
		return NULL;
	}
	close(lock);
	return sha;
}

/* ---- the sweep ---- */

/* Hashes of one batch, as a text[] literal is built from them. */
struct batch {
	char	 names[DOCS_SWEEP_BATCH][65];
	size_t	 n;
};

/* Unlink the batch's files no row names, then empty it and the arena (the
 * sweep's own: a store of millions of files is walked in constant memory).
 * The count, -1. */
static long long
sweep_batch(struct db *d, struct arena *a, int dfd, struct batch *b)
{
	char lit[DOCS_SWEEP_BATCH * 65 + 3], *p = lit;
	const char *params[1] = { lit };
	PGresult *res;
	long long gone = 0;

	*p++ = '{';
	for (size_t i = 0; i < b->n; i++)
		p += sprintf(p, "%s%s", i ? "," : "", b->names[i]);
	*p++ = '}';
	*p = '\0';
	b->n = 0;
	if ((res = db_exec(d, a, &stmts[DOC_UNREFERENCED], 1, params)) == NULL)
		gone = -1;
	for (int r = 0; gone >= 0 && r < PQntuples(res); r++) {
		char name[72];

		snprintf(name, sizeof(name), "%s.pdf", PQgetvalue(res, r, 0));
		gone += unlinkat(dfd, name, 0) == 0;
	}
	arena_reset(a);
	return gone;
}

/* One <aa> directory, locked: its old temp files, and its old documents no
 * row names. The count removed, -1. */
static long long
sweep_dir(struct db *d, struct arena *a, struct batch *b, const char *path, time_t before)
{
	long long gone = 0, k;
	struct dirent *e;
	struct stat st;
	DIR *dir;
	int lock, dfd;

	if ((lock = dir_lock(path, LOCK_EX)) < 0 || (dir = opendir(path)) == NULL) {
		log_msg("error", "document sweep: %s: %s", path, strerror(errno));
		if (lock >= 0)
			close(lock);
		return -1;
	}
	dfd = dirfd(dir);
	while ((e = readdir(dir)) != NULL && gone >= 0) {
		size_t len = strlen(e->d_name);

		if (fstatat(dfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 ||
		    !S_ISREG(st.st_mode) || st.st_mtime >= before)
			continue;
		/* a writer that died between its temp file and the rename */
		if (strncmp(e->d_name, ".tmp-", 5) == 0) {
			gone += unlinkat(dfd, e->d_name, 0) == 0;
			continue;
		}
		if (len != 68 || strcmp(e->d_name + 64, ".pdf") != 0)
			continue;
		snprintf(b->names[b->n], sizeof(b->names[0]), "%.64s", e->d_name);
		if (!is_sha_hex(b->names[b->n]))
			continue;
		if (++b->n == DOCS_SWEEP_BATCH) {
			k = sweep_batch(d, a, dfd, b);
			gone = k < 0 ? -1 : gone + k;
		}
	}
	if (b->n > 0 && gone >= 0) {
		k = sweep_batch(d, a, dfd, b);
		gone = k < 0 ? -1 : gone + k;
	}
	if (gone > 0 && fsync(dfd) != 0) {
		log_msg("error", "document sweep: fsync %s: %s", path, strerror(errno));
		gone = -1;
	}
	closedir(dir);
	close(lock);
	return gone;
}

long long
bills_docs_sweep(const struct config *cfg, struct db *d, struct arena *a)
{
	const char *top = arena_printf(a, "%s/statements", cfg->data_dir);
	const char *mark = arena_printf(a, "%s/.swept", top);
	time_t now = time(NULL);
	long long gone = 0, k;
	struct arena own;
	struct batch *b;
	struct dirent *e;
	struct stat st;
	DIR *dir;
	int fd;

	if (stat(mark, &st) == 0 && st.st_mtime > now - DOCS_SWEEP_EVERY_S)
		return 0;
	if ((dir = opendir(top)) == NULL) {
		if (errno == ENOENT)
			return 0;	/* nothing stored yet (or not on this host) */
		log_msg("error", "document sweep: %s: %s", top, strerror(errno));
		return -1;
	}
	b = arena_alloc(a, sizeof(*b));
	b->n = 0;
	arena_init(&own);
	while ((e = readdir(dir)) != NULL) {
		if (strlen(e->d_name) != 2 || strspn(e->d_name, "0123456789abcdef") != 2)
			continue;
		if ((k = sweep_dir(d, &own, b, arena_printf(a, "%s/%s", top, e->d_name),
		    now - DOCS_ORPHAN_AGE_S)) < 0) {
			gone = -1;
			break;
		}
		gone += k;
	}
	arena_free(&own);
	closedir(dir);
	if (gone < 0)
		return -1;
	if ((fd = open(mark, O_WRONLY | O_CREAT | O_CLOEXEC, 0640)) < 0 ||
	    futimens(fd, NULL) != 0) {
		log_msg("error", "document sweep: %s: %s", mark, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	close(fd);
	return gone;
}
