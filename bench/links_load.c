/*
 * bench/links_load: helpers of `bench/run --targets bill-domain` (not a test).
 *
 *   links_load key ENV
 *	a new API key for ENV (auth_key_new, checksummed), its SHA-256 hex
 *	(what client_secrets.key_hash stores) and fresh ids for the rows that
 *	hold it: prints "KEY HASH usr_... cli_... sec_..."
 *
 *   links_load ready PORT SANDBOX_URL KEY N TIMEOUT_S OUT [RATE]
 *	the connect-latency bench: a webhook receiver on 127.0.0.1:PORT (one
 *	thread, poll(), HTTP/1.1 keep-alive, answers 200 to every POST and
 *	records its arrival time, event type and link id), then N sandbox
 *	account links made one after the other (POST SANDBOX_URL
 *	/v1/sandbox/account-links, Bearer KEY, an Idempotency-Key each, body
 *	{client_user_id, username: "user_good"}) on one libcurl handle, request
 *	i starting no earlier than i/RATE s after the first (RATE 0 or absent:
 *	back to back); the 201's
 *	time is taken when curl_easy_perform returns. Then it waits (at most
 *	TIMEOUT_S after the last 201) for every link's connection.ready
 *	(data.object.link_id, else data.link_id). Writes "link_id t201_ms
 *	ready_ms" lines to OUT (ready_ms -1 when it never came) and prints
 *	"n_links n_ready p50_ms p99_ms max_ms min_ms events_received
 *	bill_created secs_creating".
 *
 * Both clocks are this process's CLOCK_MONOTONIC, so no clock skew enters.
 * Signatures are not checked (the webhook suites do that).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <curl/curl.h>
#include <json-c/json.h>

#include "core/arena.h"
#include "core/auth.h"
#include "core/crypto.h"

#define MAX_CONNS	512
#define MAX_LINKS	100000

static double
mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1000.0 + (double)ts.tv_nsec / 1e6;
}

/* ---- what the receiver saw ---------------------------------------------- */

struct arrival {
	char	 link_id[80];
	double	 t;
};
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static struct arrival *ready;	/* connection.ready arrivals */
static size_t n_ready;
static long n_events, n_bill_created;
static volatile int stop_recv;

static void
record(const char *body, size_t len, double t)
{
	struct json_object *o = json_tokener_parse(body), *type, *data, *obj, *lid = NULL;
	(void)len;

	pthread_mutex_lock(&mu);
	n_events++;
	if (o != NULL && json_object_object_get_ex(o, "type", &type)) {
		const char *ty = json_object_get_string(type);

		if (strcmp(ty, "bill.created") == 0)
			n_bill_created++;
		if (strcmp(ty, "connection.ready") == 0 &&
		    json_object_object_get_ex(o, "data", &data)) {
			if (!(json_object_object_get_ex(data, "object", &obj) &&
			    json_object_object_get_ex(obj, "link_id", &lid)))
				json_object_object_get_ex(data, "link_id", &lid);
			if (lid != NULL && n_ready < MAX_LINKS) {
				snprintf(ready[n_ready].link_id, sizeof(ready[0].link_id), "%s",
				    json_object_get_string(lid));
				ready[n_ready++].t = t;
			}
		}
	}
	pthread_mutex_unlock(&mu);
	if (o != NULL)
		json_object_put(o);
}

struct conn {
	int	 fd;
	char	*buf;
	size_t	 len, cap;
	int	 continued;	/* 100 Continue sent for the request at buf */
};

static void
conn_close(struct conn *c)
{
	close(c->fd);
	free(c->buf);
	memset(c, 0, sizeof(*c));
	c->fd = -1;
}

static int
write_all(int fd, const char *s, size_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, s, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		s += w;
		n -= (size_t)w;
	}
	return 0;
}

/* Serve every complete request in c->buf; -1 to close. */
static int
serve(struct conn *c)
{
	static const char ok[] = "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n";

	for (;;) {
		char *end = memmem(c->buf, c->len, "\r\n\r\n", 4), *p;
		size_t hlen, clen = 0;
		int expect = 0;

		if (end == NULL)
			return c->len > 65536 ? -1 : 0;
		hlen = (size_t)(end - c->buf) + 4;
		*end = '\0';
		for (p = strstr(c->buf, "\r\n"); p != NULL; p = strstr(p + 2, "\r\n")) {
			if (strncasecmp(p + 2, "Content-Length:", 15) == 0)
				clen = strtoul(p + 17, NULL, 10);
			else if (strncasecmp(p + 2, "Expect:", 7) == 0 &&
			    strcasestr(p + 9, "100-continue") != NULL)
				expect = 1;
			else if (strncasecmp(p + 2, "Transfer-Encoding:", 18) == 0)
				return -1;	/* not sent by bds-deliver */
		}
		*end = '\r';
		if (c->len < hlen + clen) {
			if (expect && !c->continued) {
				static const char cont[] = "HTTP/1.1 100 Continue\r\n\r\n";

				if (write_all(c->fd, cont, sizeof(cont) - 1) != 0)
					return -1;
				c->continued = 1;
			}
			return 0;
		}
		{
			double t = mono_ms();
			char *body = malloc(clen + 1);

			if (body == NULL)
				return -1;
			memcpy(body, c->buf + hlen, clen);
			body[clen] = '\0';
			if (write_all(c->fd, ok, sizeof(ok) - 1) != 0) {
				free(body);
				return -1;
			}
			record(body, clen, t);
			free(body);
		}
		memmove(c->buf, c->buf + hlen + clen, c->len - hlen - clen);
		c->len -= hlen + clen;
		c->continued = 0;
	}
}

static void *
receiver(void *arg)
{
	int lfd = *(int *)arg;
	static struct conn conns[MAX_CONNS];
	static struct pollfd pfd[MAX_CONNS + 1];

	for (int i = 0; i < MAX_CONNS; i++)
		conns[i].fd = -1;
	while (!stop_recv) {
		int n = 0, map[MAX_CONNS + 1];

		pfd[n].fd = lfd;
		pfd[n++].events = POLLIN;
		for (int i = 0; i < MAX_CONNS; i++)
			if (conns[i].fd >= 0) {
				pfd[n].fd = conns[i].fd;
				pfd[n].events = POLLIN;
				map[n++] = i;
			}
		if (poll(pfd, (nfds_t)n, 200) <= 0)
			continue;
		if (pfd[0].revents & POLLIN) {
			int fd = accept(lfd, NULL, NULL);

			for (int i = 0; fd >= 0 && i < MAX_CONNS; i++)
				if (conns[i].fd < 0) {
					conns[i].fd = fd;
					fd = -1;
				}
			if (fd >= 0)
				close(fd);
		}
		for (int k = 1; k < n; k++) {
			struct conn *c = &conns[map[k]];
			ssize_t r;

			if (!(pfd[k].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			if (c->cap - c->len < 16384) {
				size_t cap = c->cap ? c->cap * 2 : 65536;
				char *b = realloc(c->buf, cap);

				if (b == NULL) {
					conn_close(c);
					continue;
				}
				c->buf = b;
				c->cap = cap;
			}
			r = read(c->fd, c->buf + c->len, c->cap - c->len - 1);
			if (r <= 0) {
				conn_close(c);
				continue;
			}
			c->len += (size_t)r;
			if (serve(c) != 0)
				conn_close(c);
		}
	}
	return NULL;
}

/* ---- the driver ------------------------------------------------------------ */

struct link {
	char	 id[80];
	double	 t201, tready;
};

static size_t
sink(char *p, size_t sz, size_t n, void *u)
{
	struct { char b[8192]; size_t len; } *s = u;
	size_t k = sz * n;

	if (s->len + k < sizeof(s->b) - 1) {
		memcpy(s->b + s->len, p, k);
		s->len += k;
		s->b[s->len] = '\0';
	}
	return k;
}

static int
cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double
pct(const double *v, size_t n, double p)
{
	size_t i = (size_t)(p * (double)n + 0.999999);

	if (n == 0)
		return -1;
	if (i < 1)
		i = 1;
	return v[(i > n ? n : i) - 1];
}

static int
cmd_ready(int port, const char *base, const char *key, int n, int timeout_s, const char *out,
    double rate)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	int lfd = socket(AF_INET, SOCK_STREAM, 0), one = 1;
	struct link *links = calloc((size_t)n, sizeof(*links));
	pthread_t th;
	CURL *h;
	struct curl_slist *hd0 = NULL;
	char url[1024], auth[512], body[256];
	struct { char b[8192]; size_t len; } resp;
	double t0, tlast, *lat;
	size_t got = 0;
	FILE *f;

	ready = calloc(MAX_LINKS, sizeof(*ready));
	if (links == NULL || ready == NULL || lfd < 0)
		return 1;
	inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) != 0 || listen(lfd, 512) != 0) {
		fprintf(stderr, "links_load: cannot listen on 127.0.0.1:%d: %s\n", port,
		    strerror(errno));
		return 1;
	}
	pthread_create(&th, NULL, receiver, &lfd);

	curl_global_init(CURL_GLOBAL_DEFAULT);
	h = curl_easy_init();
	snprintf(url, sizeof(url), "%s/v1/sandbox/account-links", base);
	snprintf(auth, sizeof(auth), "Authorization: Bearer %s", key);
	hd0 = curl_slist_append(hd0, auth);
	hd0 = curl_slist_append(hd0, "Content-Type: application/json");
	hd0 = curl_slist_append(hd0, "Expect:");
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, sink);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, &resp);
	curl_easy_setopt(h, CURLOPT_TIMEOUT, 30L);
	t0 = mono_ms();
	for (int i = 0; i < n; i++) {
		struct curl_slist *hd = NULL, *it;
		char idem[128];
		long code = 0;
		struct json_object *o, *lid;
		CURLcode rc;

		if (rate > 0) {
			double due = t0 + i * 1000.0 / rate, now = mono_ms();

			if (due > now)
				usleep((useconds_t)((due - now) * 1000.0));
		}
		for (it = hd0; it != NULL; it = it->next)
			hd = curl_slist_append(hd, it->data);
		snprintf(idem, sizeof(idem), "Idempotency-Key: bench-ready-%d-%d-%.0f",
		    (int)getpid(), i, t0);
		hd = curl_slist_append(hd, idem);
		snprintf(body, sizeof(body),
		    "{\"client_user_id\":\"bench-user-%d\",\"username\":\"user_good\"}", i);
		resp.len = 0;
		resp.b[0] = '\0';
		curl_easy_setopt(h, CURLOPT_HTTPHEADER, hd);
		curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
		rc = curl_easy_perform(h);
		links[i].t201 = mono_ms();
		curl_slist_free_all(hd);
		curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
		if (rc != CURLE_OK || code != 201) {
			fprintf(stderr, "links_load: link %d: %s, HTTP %ld: %s\n", i,
			    curl_easy_strerror(rc), code, resp.b);
			return 1;
		}
		o = json_tokener_parse(resp.b);
		if (o == NULL || !json_object_object_get_ex(o, "link_id", &lid)) {
			fprintf(stderr, "links_load: link %d: no link_id in %s\n", i, resp.b);
			return 1;
		}
		snprintf(links[i].id, sizeof(links[i].id), "%s", json_object_get_string(lid));
		links[i].tready = -1;
		json_object_put(o);
	}
	tlast = mono_ms();
	curl_easy_cleanup(h);
	curl_slist_free_all(hd0);

	/* wait for every connection.ready, at most timeout_s after the last 201 */
	for (;;) {
		size_t m;

		pthread_mutex_lock(&mu);
		m = n_ready;
		pthread_mutex_unlock(&mu);
		if (m >= (size_t)n || mono_ms() - tlast > timeout_s * 1000.0)
			break;
		usleep(20000);
	}
	usleep(300000);	/* late duplicates, if any, are counted too */
	stop_recv = 1;
	pthread_join(th, NULL);

	lat = calloc((size_t)n, sizeof(*lat));
	f = fopen(out, "w");
	if (lat == NULL || f == NULL)
		return 1;
	for (int i = 0; i < n; i++) {
		for (size_t k = 0; k < n_ready; k++)
			if (strcmp(ready[k].link_id, links[i].id) == 0) {
				links[i].tready = ready[k].t;
				break;
			}
		fprintf(f, "%s %.3f %.3f\n", links[i].id, links[i].t201 - t0,
		    links[i].tready < 0 ? -1.0 : links[i].tready - t0);
		if (links[i].tready >= 0)
			lat[got++] = links[i].tready - links[i].t201;
	}
	fclose(f);
	qsort(lat, got, sizeof(*lat), cmp_d);
	printf("%d %zu %.1f %.1f %.1f %.1f %ld %ld %.1f %zu\n", n, got, pct(lat, got, 0.50),
	    pct(lat, got, 0.99), got ? lat[got - 1] : -1, got ? lat[0] : -1, n_events,
	    n_bill_created, (tlast - t0) / 1000.0, n_ready);
	return 0;
}

int
main(int argc, char **argv)
{
	if (crypto_setup() != 0)
		return 1;
	if (argc == 3 && strcmp(argv[1], "key") == 0) {
		struct arena a;
		char *k;

		arena_init(&a);
		k = auth_key_new(&a, argv[2]);
		printf("%s %s %s %s %s\n", k, auth_key_hash(&a, k), crypto_id_new(&a, "usr"),
		    crypto_id_new(&a, "cli"), crypto_id_new(&a, "sec"));
		arena_free(&a);
		return 0;
	}
	if ((argc == 8 || argc == 9) && strcmp(argv[1], "ready") == 0) {
		int n = atoi(argv[5]);

		if (n < 1 || n > MAX_LINKS) {
			fprintf(stderr, "links_load: N must be 1..%d\n", MAX_LINKS);
			return 2;
		}
		return cmd_ready(atoi(argv[2]), argv[3], argv[4], n, atoi(argv[6]), argv[7],
		    argc == 9 ? atof(argv[8]) : 0);
	}
	fprintf(stderr, "usage: links_load key ENV | links_load ready PORT SANDBOX_URL KEY N"
	    " TIMEOUT_S OUT [RATE]\n");
	return 2;
}
