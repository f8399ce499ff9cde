#ifndef BDS_JOBS_CONV_H
#define BDS_JOBS_CONV_H
/*
 * Conversations: the part of a job that waits on the network, run
 * concurrently in one process (lib/jobs/jobs_loop.c). A conversation is a
 * coroutine on a stack of its own; its code reads as a plain sequence of
 * calls (login, accounts, statements...), and wherever it would block, on an
 * HTTP exchange (conv_perform) or a pause (conv_sleep), it hands its
 * transfer to the loop's libcurl multi handle and yields. The loop resumes
 * it when the transfer ends. So the stack is the conversation's state
 * machine: a biller that answers slowly costs a socket and a small stack,
 * never a worker, and a thousand of them cost a thousand sockets.
 *
 * Rules for code that runs in a conversation: no transaction is open when
 * it yields (each statement it runs is its own), and it touches only its own
 * job's arena; the loop is single-threaded, so between two yields the code
 * runs alone. Called outside a conversation (bdsctl, unit suites),
 * conv_perform is curl_easy_perform and conv_sleep sleeps.
 */
#include <curl/curl.h>

struct conv;

/* The loop's side (jobs_loop.c). */
struct conv_loop {
	CURLM		*multi;
	int		 running;	/* conversations not yet finished */
	struct conv	*sleepers;	/* waiting on a timer (conv_sleep) */
};

/* 0 ok, -1 out of memory. */
int	 conv_loop_init(struct conv_loop *);
void	 conv_loop_free(struct conv_loop *);

/*
 * Start fn(arg) as a conversation of loop l and run it until it first
 * yields or ends. NULL when no stack could be had (the caller runs fn
 * itself, blocking). *done is set to 1 when fn has returned.
 */
struct conv *conv_start(struct conv_loop *l, void (*fn)(void *), void *arg, int *done);
/* Free a conversation that has ended. */
void	 conv_free(struct conv *);

/*
 * Wait up to timeout_ms for transfers, extra fds (PostgreSQL's socket) or
 * a due timer, then resume every conversation whose transfer or timer
 * ended (each until its next yield or its end). Returns how many extra
 * fds had input (as curl_multi_poll), -1 on a libcurl failure.
 */
int	 conv_loop_step(struct conv_loop *l, struct curl_waitfd *extra, unsigned nextra,
	    int timeout_ms);
/* In a conversation: the transfer on the loop, yielding until it ends.
 * Outside one: curl_easy_perform. */
CURLcode conv_perform(CURL *easy);
/* In a conversation: yield for ms. Outside one: sleep. */
void	 conv_sleep(long long ms);
/* 1 inside a conversation. */
int	 conv_inside(void);

#endif
