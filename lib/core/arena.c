/*
 * Per-request bump allocator.
 *
 * Memory comes in blocks of ARENA_BLOCK_SIZE bytes; a request larger than a
 * quarter of that gets a block of its own, so one big body does not waste
 * the rest of the current block. Every allocation is zeroed and aligned to
 * ARENA_ALIGN. arena_reset() runs the deferred cleanups last first, then
 * frees every block but one default-sized block, which is kept (rewound)
 * for the next request: a worker's footprint stays flat between requests.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/arena.h"

#define ARENA_ALIGN		16u
#define ARENA_BLOCK_SIZE	(16u * 1024u)
#define ARENA_BIG		(ARENA_BLOCK_SIZE / 4u)

/* Blocks come from malloc, which aligns for max_align_t. */
_Static_assert(_Alignof(max_align_t) >= ARENA_ALIGN, "malloc alignment");

struct arena_block {
	struct arena_block	*next;
	size_t			 size;	/* bytes after the header */
	size_t			 off;	/* bytes used */
};

/* The header, rounded up so that data starts aligned. */
#define ARENA_HDR \
	((sizeof(struct arena_block) + ARENA_ALIGN - 1) & \
	~(size_t)(ARENA_ALIGN - 1))

struct arena_defer {
	struct arena_defer	*next;
	void			(*fn)(void *);
	void			*arg;
};

static void
arena_oom(void)
{
	/* lib never exits; running out of memory is the one abort. */
	fputs("arena: out of memory\n", stderr);
	abort();
}

static unsigned char *
arena_block_data(struct arena_block *b)
{
	return (unsigned char *)b + ARENA_HDR;
}

static struct arena_block *
arena_block_new(size_t size)
{
	struct arena_block	*b;

	if (size > SIZE_MAX - ARENA_HDR)
		arena_oom();
	if ((b = malloc(ARENA_HDR + size)) == NULL)
		arena_oom();
	b->next = NULL;
	b->size = size;
	b->off = 0;
	return b;
}

/* An empty arena; the first block comes with the first allocation. */
void
arena_init(struct arena *a)
{
	a->head = NULL;
	a->defers = NULL;
	a->used = 0;
}

/* n bytes aligned to ARENA_ALIGN, not zeroed (arena_alloc's body). */
static void *
arena_alloc_raw(struct arena *a, size_t n)
{
	struct arena_block	*b;
	unsigned char		*p;

	if (n == 0)
		n = 1;
	if (n > SIZE_MAX - ARENA_ALIGN)
		arena_oom();
	n = (n + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1);

	b = a->head;
	if (b == NULL || b->size - b->off < n) {
		if (n > ARENA_BIG) {
			/*
			 * A block of its own, linked behind the current
			 * one so the current block stays in use.
			 */
			b = arena_block_new(n);
			if (a->head == NULL)
				a->head = b;
			else {
				b->next = a->head->next;
				a->head->next = b;
			}
		} else {
			b = arena_block_new(ARENA_BLOCK_SIZE);
			b->next = a->head;
			a->head = b;
		}
	}
	p = arena_block_data(b) + b->off;
	b->off += n;
	a->used += n;
	return p;
}

/*
 * n zeroed bytes aligned to ARENA_ALIGN, valid until the next reset. Never
 * NULL: aborts when memory runs out. n == 0 still gives a unique pointer.
 */
void *
arena_alloc(struct arena *a, size_t n)
{
	void	*p = arena_alloc_raw(a, n);

	memset(p, 0, n == 0 ? 1 : n);
	return p;
}

/* Copy n bytes and add a NUL; NULL when p is NULL and n > 0. */
char *
arena_memdup(struct arena *a, const void *p, size_t n)
{
	char	*s;

	if (p == NULL && n > 0)
		return NULL;
	if (n == SIZE_MAX)
		arena_oom();
	/* not zeroed first: a list page's copy runs to megabytes */
	s = arena_alloc_raw(a, n + 1);
	if (n > 0)
		memcpy(s, p, n);
	s[n] = '\0';
	return s;
}

/* Copy of s in the arena; NULL in, NULL out. */
char *
arena_strdup(struct arena *a, const char *s)
{
	if (s == NULL)
		return NULL;
	return arena_memdup(a, s, strlen(s));
}

/* Copy of at most n bytes of s, NUL-terminated; NULL in, NULL out. */
char *
arena_strndup(struct arena *a, const char *s, size_t n)
{
	if (s == NULL)
		return NULL;
	return arena_memdup(a, s, strnlen(s, n));
}

/* Formatted string in the arena; NULL only on an encoding error. */
char *
arena_vprintf(struct arena *a, const char *fmt, va_list ap)
{
	va_list	 ap2;
	char	*s;
	int	 len;

	va_copy(ap2, ap);
	len = vsnprintf(NULL, 0, fmt, ap2);
	va_end(ap2);
	if (len < 0)
		return NULL;
	s = arena_alloc(a, (size_t)len + 1);
	if (vsnprintf(s, (size_t)len + 1, fmt, ap) != len)
		return NULL;
	return s;
}

/* As arena_vprintf(). */
char *
arena_printf(struct arena *a, const char *fmt, ...)
{
	va_list	 ap;
	char	*s;

	va_start(ap, fmt);
	s = arena_vprintf(a, fmt, ap);
	va_end(ap);
	return s;
}

/* Run fn(arg) at the next reset, after cleanups registered later. */
void
arena_defer(struct arena *a, void (*fn)(void *), void *arg)
{
	struct arena_defer	*d;

	d = arena_alloc(a, sizeof(*d));
	d->fn = fn;
	d->arg = arg;
	d->next = a->defers;
	a->defers = d;
}

/*
 * Run the cleanups, last registered first, then release all memory but one
 * default-sized block, rewound for the next request.
 */
void
arena_reset(struct arena *a)
{
	struct arena_defer	*d;
	struct arena_block	*b, *next, *keep = NULL;

	/*
	 * Pop one at a time: the records live in the blocks, which are
	 * only freed afterwards, and a cleanup that defers another still
	 * sees it run.
	 */
	while ((d = a->defers) != NULL) {
		a->defers = d->next;
		if (d->fn != NULL)
			d->fn(d->arg);
	}

	/* Keep the oldest default-sized block; big blocks always go. */
	for (b = a->head; b != NULL; b = next) {
		next = b->next;
		if (b->size == ARENA_BLOCK_SIZE) {
			if (keep != NULL)
				free(keep);
			keep = b;
		} else
			free(b);
	}
	if (keep != NULL) {
		keep->next = NULL;
		keep->off = 0;
	}
	a->head = keep;
	a->used = 0;
}

/* Reset and free everything; accepts NULL. The arena may be re-inited. */
void
arena_free(struct arena *a)
{
	if (a == NULL)
		return;
	arena_reset(a);
	free(a->head);
	arena_init(a);
}
