#ifndef BDS_E2E_SMTP_SINK_H
#define BDS_E2E_SMTP_SINK_H
/*
 * An SMTP sink for the e2e suites: a small ESMTP server on 127.0.0.1 that
 * keeps every message it accepts in memory, so a test reads what
 * bds-deliver really sent over SMTP. One thread accepts; each connection
 * gets a thread. It speaks EHLO/HELO, AUTH PLAIN and LOGIN (offered and
 * required only when a user is set), MAIL FROM, RCPT TO, DATA (undoing the
 * client's dot-stuffing), RSET, NOOP and QUIT, and never offers STARTTLS.
 *
 * Check runs each test in a forked child, and threads do not cross a fork:
 * start the sink inside the test, on harness_smtp_port() (the port the
 * harness wrote into smtp_url), and stop it before the test returns.
 *
 *	struct smtp_sink_opts so = { .port = harness_smtp_port() };
 *	struct smtp_sink *sink = smtp_sink_start(&so);
 *	... enqueue, harness_deliver_once() ...
 *	const struct smtp_msg *m = smtp_sink_wait(sink, 0, 5000);
 *	smtp_msg_code(m, code);
 *	smtp_sink_stop(sink);
 */
#include <stddef.h>

struct smtp_sink_opts {
	int		 port;		/* 0: an ephemeral port */
	int		 fail_data;	/* answer DATA with 451 (can change later) */
	const char	*user;		/* non-NULL: offer AUTH, require it for MAIL */
	const char	*password;
	const char	*auth_mechs;	/* offered mechanisms (default "PLAIN LOGIN") */
	const char	*reject_rcpt;	/* RCPT TO holding this string: 550 */
};

/* One accepted message. Strings are NUL-terminated; owned by the sink. */
struct smtp_msg {
	char		*from;		/* MAIL FROM address, without the <> */
	char		**rcpts;	/* RCPT TO addresses, without the <> */
	size_t		 nrcpts;
	char		*data;		/* the message as sent: CRLF lines, unstuffed */
	size_t		 len;
	int		 authed;	/* the session had authenticated */
	int		 taken;		/* handed out by smtp_sink_take() */
};

struct smtp_sink;

/* Listen and serve; NULL on failure (smtp_sink_error() says why). */
struct smtp_sink *smtp_sink_start(const struct smtp_sink_opts *o);
/* Close every connection, join the threads, free the messages. NULL ok. */
void	 smtp_sink_stop(struct smtp_sink *s);
const char *smtp_sink_error(void);

int	 smtp_sink_port(const struct smtp_sink *s);
/* From now on answer DATA with 451 (on) or accept it (off). */
void	 smtp_sink_set_fail_data(struct smtp_sink *s, int on);
/* Messages accepted; DATA commands refused with 451; successful AUTHs. */
size_t	 smtp_sink_count(struct smtp_sink *s);
size_t	 smtp_sink_rejected(struct smtp_sink *s);
size_t	 smtp_sink_auths(struct smtp_sink *s);
/* The n-th accepted message (0-based) once it has arrived; NULL after
 * timeout_ms. Valid until smtp_sink_stop(). */
const struct smtp_msg *smtp_sink_wait(struct smtp_sink *s, size_t n, int timeout_ms);
/* The sink as a mailbox: the oldest message to exactly `to` (its one
 * recipient, case-insensitive) not taken yet, now taken; waits up to
 * timeout_ms for one to arrive. NULL when none. */
const struct smtp_msg *smtp_sink_take(struct smtp_sink *s, const char *to, int timeout_ms);

/* The first header called name (case-insensitive), unfolded, with RFC 2047
 * B-encoded words decoded; malloc'ed, NULL when absent. */
char	*smtp_msg_header(const struct smtp_msg *m, const char *name);
/* The body: what follows the blank line after the headers ("" if none). */
const char *smtp_msg_body(const struct smtp_msg *m);
/* The first 6-digit code standing alone in text (as the regular
 * expression \b\d{6}\b finds it) into out: 0, or -1 when there is none. */
int	 smtp_find_code(const char *text, char out[7]);
/* smtp_find_code() on the message's body. */
int	 smtp_msg_code(const struct smtp_msg *m, char out[7]);

#endif
