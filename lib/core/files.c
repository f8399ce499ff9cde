/*
 * Whole files or none (core/files.h). A reader of path sees the old file
 * or the new one, never a part: the bytes go to a temporary name first and
 * only a complete, fsync'd file is renamed over path; a rename within one
 * directory is atomic, and the directory's fsync makes it durable.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/arena.h"
#include "core/crypto.h"
#include "core/files.h"

int
files_fsync_dir(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC), rc, e;

	if (fd < 0)
		return -1;
	rc = fsync(fd);
	e = errno;
	close(fd);
	errno = e;
	return rc;
}

/* All of buf to fd, then fsync. 0, -1 with errno. */
static int
write_all(int fd, const unsigned char *p, size_t len)
{
	while (len > 0) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		if (n == 0) {
			errno = EIO;
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	return fsync(fd);
}

int
files_write_atomic(struct arena *a, const char *dir, const char *path, const void *buf,
    size_t len, mode_t mode)
{
	unsigned char rnd[8];
	const char *tmp;
	int fd, e;

	crypto_random_bytes(rnd, sizeof(rnd));
	tmp = arena_printf(a, "%s/.tmp-%s", dir, crypto_hex_encode(a, rnd, sizeof(rnd)));
	if ((fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode)) < 0)
		return -1;
	if (fchmod(fd, mode) != 0 || write_all(fd, buf, len) != 0) {
		e = errno;
		close(fd);
		unlink(tmp);
		errno = e;
		return -1;
	}
	if (close(fd) != 0 || rename(tmp, path) != 0) {
		e = errno;
		unlink(tmp);
		errno = e;
		return -1;
	}
	return files_fsync_dir(dir);
}
