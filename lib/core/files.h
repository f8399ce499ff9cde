#ifndef BDS_CORE_FILES_H
#define BDS_CORE_FILES_H
/*
 * Files the service writes under data_dir (statement documents, logos):
 * whole or not at all, a full disk included.
 */
#include <stddef.h>
#include <sys/types.h>

struct arena;

/*
 * len bytes of buf to path: through a new temporary file in path's
 * directory (dir, given: <dir>/.tmp-<16 hex>, so a sweep can tell what a
 * writer that died left behind), made with mode whatever the umask,
 * written whole, fsync'd, renamed over path, then dir fsync'd. On a
 * failure (ENOSPC or EDQUOT when the disk is full: the caller retries
 * later) the temporary file is removed and errno says why; path is as it
 * was, unless only the directory's fsync failed (the new file is in
 * place, maybe not durably). 0, -1.
 */
int	 files_write_atomic(struct arena *, const char *dir, const char *path,
	    const void *buf, size_t len, mode_t mode);
/* fsync of a directory (its entries made durable). 0, -1 with errno. */
int	 files_fsync_dir(const char *dir);

#endif
