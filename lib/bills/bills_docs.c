/*
 * The document store: content-addressed files under
 * <data_dir>/statements/<aa>/<sha256>.pdf. Only bds-jobs writes here; nginx
 * reads (the internal location /_statements/), the API never opens a file.
 * A name is its content's hash, so a file is written once and never
 * changed: two runners storing the same document race harmlessly (the
 * rename of identical bytes), and a transaction that rolls back after the
 * write leaves an unreferenced file, never a reference to a missing one.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/arena.h"
#include "core/config.h"
#include "core/crypto.h"
#include "core/log.h"
#include "bills/bills_statement.h"

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

static int
fsync_dir(const char *path)
{
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC), rc;

	if (fd < 0)
		return -1;
	rc = fsync(fd);
	close(fd);
	return rc;
}

/* Write all of buf to a new file, fsync'd; 0 ok, -1 with errno. */
static int
write_new(const char *path, const void *buf, size_t len)
{
	const unsigned char *p = buf;
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0640), e;

	if (fd < 0)
		return -1;
	if (fchmod(fd, 0640) != 0)
		goto fail;
	while (len > 0) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			goto fail;
		p += n;
		len -= (size_t)n;
	}
	if (fsync(fd) != 0)
		goto fail;
	return close(fd);
fail:
	e = errno;
	close(fd);
	unlink(path);
	errno = e;
	return -1;
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
	unsigned char md[32], rnd[8];
	const char *sha, *top, *dir, *path, *tmp;
	struct stat st;
	int made;

	if (len == 0 || (long long)len > BILLS_DOC_MAX) {
		log_msg("error", "document store: refused a document of %zu bytes", len);
		return NULL;
	}
	crypto_sha256(bytes, len, md);
	sha = crypto_hex_encode(a, md, sizeof(md));
	top = arena_printf(a, "%s/statements", cfg->data_dir);
	dir = arena_printf(a, "%s/%.2s", top, sha);
	path = bills_docs_path(a, cfg, sha);
	/* Same name, same bytes: an existing file of the right size is it. */
	if (stat(path, &st) == 0 && S_ISREG(st.st_mode) && (size_t)st.st_size == len)
		return sha;
	if (mkdir_0750(cfg->data_dir) < 0 || mkdir_0750(top) < 0 || (made = mkdir_0750(dir)) < 0) {
		log_msg("error", "document store: mkdir under %s: %s", cfg->data_dir,
		    strerror(errno));
		return NULL;
	}
	crypto_random_bytes(rnd, sizeof(rnd));
	tmp = arena_printf(a, "%s/.tmp-%s", dir, crypto_hex_encode(a, rnd, sizeof(rnd)));
	/* a new <aa> directory's own entry must be durable too */
	if (write_new(tmp, bytes, len) != 0 || rename(tmp, path) != 0 || fsync_dir(dir) != 0 ||
	    (made && fsync_dir(top) != 0)) {
		log_msg("error", "document store: write %s: %s", path, strerror(errno));
		unlink(tmp);
		return NULL;
	}
	return sha;
}
