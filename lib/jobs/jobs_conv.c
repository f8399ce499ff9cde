/*
 * Conversations as coroutines over one libcurl multi handle. See
 * jobs_conv.h. Each conversation has an mmap'ed stack with a guard page
 * below it; switching is ucontext's swapcontext, annotated for
 * AddressSanitizer (fibers) and registered with valgrind when its header is
 * there, so both keep seeing the right stack.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "core/clock.h"
#include "jobs/jobs_conv.h"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/common_interface_defs.h>
#define CONV_ASAN	1
#define CONV_STACK	(2u * 1024 * 1024)	/* ASan's frames are larger */
#else
#define CONV_ASAN	0
#define CONV_STACK	(512u * 1024)
#endif
#if defined(__has_include)
#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#define CONV_VALGRIND	1
#endif
#endif
#ifndef CONV_VALGRIND
#define CONV_VALGRIND	0
#endif

struct conv {
	ucontext_t	 ctx;
	struct conv_loop *loop;
	void		*map;		/* guard page + stack */
	size_t		 maplen;
	void		(*fn)(void *);
	void		*arg;
	int		*done;
	int		 ended;
	/* what it waits on */
	CURLcode	 result;
	int		 transfer_done;
	long long	 wake_ms;	/* conv_sleep: due (monotonic ms) */
	struct conv	*next_sleeper;
	struct conv	*next_ready;	/* the step's list of conversations to resume */
	unsigned	 vg_id;
	void		*fake;		/* ASan's fake stack while switched out */
};

/* The loop's context while a conversation runs, and which one runs. The
 * loop is single-threaded: one of each per process. */
static ucontext_t loop_ctx;
static struct conv *cur;
#if CONV_ASAN
static const void *loop_bottom;
static size_t loop_size;
#endif

int
conv_loop_init(struct conv_loop *l)
{
	memset(l, 0, sizeof(*l));
	if ((l->multi = curl_multi_init()) == NULL)
		return -1;
	return 0;
}

void
conv_loop_free(struct conv_loop *l)
{
	if (l->multi != NULL)
		curl_multi_cleanup(l->multi);
	l->multi = NULL;
}

int
conv_inside(void)
{
	return cur != NULL;
}

/* Loop -> c, until c yields or ends. */
static void
resume(struct conv *c)
{
#if CONV_ASAN
	void *fake = NULL;
#endif

	cur = c;
#if CONV_ASAN
	__sanitizer_start_switch_fiber(&fake, (char *)c->map + (size_t)getpagesize(),
	    c->maplen - (size_t)getpagesize());
#endif
	swapcontext(&loop_ctx, &c->ctx);
#if CONV_ASAN
	__sanitizer_finish_switch_fiber(fake, NULL, NULL);
#endif
	cur = NULL;
}

/* The running conversation -> the loop; back here when resumed. */
static void
yield(void)
{
	struct conv *c = cur;

#if CONV_ASAN
	__sanitizer_start_switch_fiber(&c->fake, loop_bottom, loop_size);
#endif
	swapcontext(&c->ctx, &loop_ctx);
#if CONV_ASAN
	__sanitizer_finish_switch_fiber(c->fake, &loop_bottom, &loop_size);
#endif
}

static void
trampoline(void)
{
	struct conv *c = cur;

#if CONV_ASAN
	__sanitizer_finish_switch_fiber(NULL, &loop_bottom, &loop_size);
#endif
	c->fn(c->arg);
	*c->done = 1;
	c->ended = 1;
	c->loop->running--;
#if CONV_ASAN
	/* NULL: this fiber's fake stack may go, it never runs again */
	__sanitizer_start_switch_fiber(NULL, loop_bottom, loop_size);
#endif
	setcontext(&loop_ctx);
}

/* c's context: the trampoline on its stack. Apart from conv_start, whose
 * locals getcontext (which returns twice in principle) would clobber. */
static int
context(struct conv *c, size_t page)
{
	if (getcontext(&c->ctx) != 0)
		return -1;
	c->ctx.uc_stack.ss_sp = (char *)c->map + page;
	c->ctx.uc_stack.ss_size = CONV_STACK;
	c->ctx.uc_link = NULL;
	makecontext(&c->ctx, trampoline, 0);
	return 0;
}

struct conv *
conv_start(struct conv_loop *l, void (*fn)(void *), void *arg, int *done)
{
	size_t page = (size_t)getpagesize();
	struct conv *c;

	*done = 0;
	if ((c = calloc(1, sizeof(*c))) == NULL)
		return NULL;
	c->maplen = CONV_STACK + page;
	c->map = mmap(NULL, c->maplen, PROT_READ | PROT_WRITE,
	    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
	if (c->map == MAP_FAILED) {
		free(c);
		return NULL;
	}
	/* the stack grows down: a page below it faults instead of writing
	 * over another mapping */
	(void)mprotect(c->map, page, PROT_NONE);
	if (context(c, page) != 0) {
		munmap(c->map, c->maplen);
		free(c);
		return NULL;
	}
#if CONV_VALGRIND
	c->vg_id = VALGRIND_STACK_REGISTER((char *)c->map + page, (char *)c->map + c->maplen);
#endif
	c->loop = l;
	c->fn = fn;
	c->arg = arg;
	c->done = done;
	l->running++;
	resume(c);
	return c;
}

void
conv_free(struct conv *c)
{
	if (c == NULL)
		return;
#if CONV_VALGRIND
	VALGRIND_STACK_DEREGISTER(c->vg_id);
#endif
	munmap(c->map, c->maplen);
	free(c);
}

CURLcode
conv_perform(CURL *easy)
{
	struct conv *c = cur;

	if (c == NULL)
		return curl_easy_perform(easy);
	if (curl_easy_setopt(easy, CURLOPT_PRIVATE, (void *)c) != CURLE_OK ||
	    curl_multi_add_handle(c->loop->multi, easy) != CURLM_OK)
		return CURLE_FAILED_INIT;
	c->transfer_done = 0;
	while (!c->transfer_done)
		yield();
	curl_multi_remove_handle(c->loop->multi, easy);
	return c->result;
}

void
conv_sleep(long long ms)
{
	struct conv *c = cur;

	if (ms <= 0)
		return;
	if (c == NULL) {
		struct timespec ts = { (time_t)(ms / 1000), (long)(ms % 1000) * 1000000L };

		while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
			;
		return;
	}
	c->wake_ms = mono_ms() + ms;
	c->next_sleeper = c->loop->sleepers;
	c->loop->sleepers = c;
	while (c->wake_ms != 0)
		yield();
}

int
conv_loop_step(struct conv_loop *l, struct curl_waitfd *extra, unsigned nextra,
    int timeout_ms)
{
	struct conv *ready = NULL, **pp, *c;
	long long now = mono_ms();
	CURLMsg *m;
	int still, left, had = 0;
	unsigned i;

	/* a due timer shortens the wait */
	for (c = l->sleepers; c != NULL; c = c->next_sleeper) {
		long long in = c->wake_ms - now;

		if (in < timeout_ms)
			timeout_ms = in < 0 ? 0 : (int)in;
	}
	for (i = 0; i < nextra; i++)
		extra[i].revents = 0;
	if (curl_multi_poll(l->multi, extra, nextra, timeout_ms, NULL) != CURLM_OK ||
	    curl_multi_perform(l->multi, &still) != CURLM_OK)
		return -1;
	for (i = 0; i < nextra; i++)
		if (extra[i].revents != 0)
			had++;
	/* The finished transfers first, collected before any is resumed: a
	 * resumed conversation removes and adds handles. */
	while ((m = curl_multi_info_read(l->multi, &left)) != NULL) {
		char *priv = NULL;

		if (m->msg != CURLMSG_DONE)
			continue;
		curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, &priv);
		if ((c = (struct conv *)(void *)priv) == NULL)
			continue;
		c->result = m->data.result;
		c->transfer_done = 1;
		c->next_ready = ready;
		ready = c;
	}
	now = mono_ms();
	for (pp = &l->sleepers; (c = *pp) != NULL;) {
		if (c->wake_ms <= now) {
			*pp = c->next_sleeper;
			c->wake_ms = 0;
			c->next_ready = ready;
			ready = c;
		} else {
			pp = &c->next_sleeper;
		}
	}
	while ((c = ready) != NULL) {
		ready = c->next_ready;
		resume(c);
	}
	return had;
}
