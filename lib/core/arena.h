#ifndef BDS_ARENA_H
#define BDS_ARENA_H
/*
 * Per-request bump allocator. Everything a request allocates comes from its
 * arena and is released at once by arena_reset(). Non-memory resources
 * (PGresult, json_object) are registered with arena_defer() and released,
 * last registered first, by the same reset.
 */
#include <stddef.h>
#include <stdarg.h>

struct arena_block;
struct arena_defer;

struct arena {
	struct arena_block *head;	/* newest block first */
	struct arena_defer *defers;	/* LIFO list of cleanups */
	size_t used;			/* bytes handed out since last reset */
};

void	 arena_init(struct arena *);
/* Zeroed memory aligned for any type; never NULL (aborts on OOM). */
void	*arena_alloc(struct arena *, size_t);
char	*arena_strdup(struct arena *, const char *);	/* NULL in, NULL out */
char	*arena_strndup(struct arena *, const char *, size_t);
char	*arena_memdup(struct arena *, const void *, size_t);	/* adds a NUL */
char	*arena_printf(struct arena *, const char *, ...)
	    __attribute__((format(printf, 2, 3)));
char	*arena_vprintf(struct arena *, const char *, va_list)
	    __attribute__((format(printf, 2, 0)));
/* Run fn(arg) at the next reset. fn may be NULL-safe or not; arg is passed as is. */
void	 arena_defer(struct arena *, void (*fn)(void *), void *arg);
/* Run defers LIFO, free every block but the first (kept for reuse). */
void	 arena_reset(struct arena *);
/* Reset and free everything; the arena may be arena_init'ed again. */
void	 arena_free(struct arena *);

#endif
