/*
 * lib/urlsafe.c: parsing, the address classes, the whole check in every
 * numeric form (no DNS: numeric hosts resolve locally), and the libcurl pin
 * (a loopback listener in a forked child: the connection goes to the
 * pinned address whatever the URL's host says, and a redirect is not
 * followed).
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include <check.h>
#include <curl/curl.h>

#include "core/arena.h"
#include "tarena.h"
#include "tcheck.h"
#include "core/urlsafe.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* ---- parse ---- */

static const struct {
	const char	*url;
	const char	*canonical;
	const char	*host;
	int		 port;
	int		 ip;
} parse_valid[] = {
	{ "https://example.com", "https://example.com/", "example.com", 443, 0 },
	{ "HTTPS://Example.COM/Path?Q=1", "https://example.com/Path?Q=1", "example.com", 443, 0 },
	{ "https://example.com?x=1", "https://example.com/?x=1", "example.com", 443, 0 },
	{ "http://hooks.example.com:8080/in", "http://hooks.example.com:8080/in",
	  "hooks.example.com", 8080, 0 },
	{ "https://example.com:443/a", "https://example.com/a", "example.com", 443, 0 },
	{ "http://example.com:443/a", "http://example.com:443/a", "example.com", 443, 0 },
	{ "https://a-b.c-d.example/x/y%2Fz;p=1?a=b&c=d", "https://a-b.c-d.example/x/y%2Fz;p=1?a=b&c=d",
	  "a-b.c-d.example", 443, 0 },
	{ "https://xn--bcher-kva.example/", "https://xn--bcher-kva.example/",
	  "xn--bcher-kva.example", 443, 0 },
	/* every IPv4 form becomes the dotted quad */
	{ "http://127.0.0.1/", "http://127.0.0.1/", "127.0.0.1", 80, 4 },
	{ "http://2130706433/", "http://127.0.0.1/", "127.0.0.1", 80, 4 },
	{ "http://0177.0.0.1/", "http://127.0.0.1/", "127.0.0.1", 80, 4 },
	{ "http://0x7f.0.0.1/", "http://127.0.0.1/", "127.0.0.1", 80, 4 },
	{ "http://0X7F.0.0.1/", "http://127.0.0.1/", "127.0.0.1", 80, 4 },
	{ "http://0x7f000001/", "http://127.0.0.1/", "127.0.0.1", 80, 4 },
	{ "http://017700000001/", "http://127.0.0.1/", "127.0.0.1", 80, 4 },
	{ "http://127.1/", "http://127.0.0.1/", "127.0.0.1", 80, 4 },
	{ "http://127.0.1/", "http://127.0.0.1/", "127.0.0.1", 80, 4 },
	{ "http://0x7f.1:8080/a?b=c", "http://127.0.0.1:8080/a?b=c", "127.0.0.1", 8080, 4 },
	{ "http://0/", "http://0.0.0.0/", "0.0.0.0", 80, 4 },
	/* IPv6 in its canonical text */
	{ "http://[::1]:8080/", "http://[::1]:8080/", "::1", 8080, 6 },
	{ "http://[0:0:0:0:0:ffff:7f00:1]/", "http://[::ffff:127.0.0.1]/", "::ffff:127.0.0.1", 80, 6 },
	{ "https://[2606:4700:4700:0:0:0:0:1111]/h", "https://[2606:4700:4700::1111]/h",
	  "2606:4700:4700::1111", 443, 6 },
};

START_TEST(parse_ok)
{
	struct urlsafe_url u;
	const char *why;
	enum urlsafe_err e = urlsafe_parse(&a, parse_valid[_i].url, &u, &why);

	ck_assert_msg(e == URLSAFE_OK, "%s: refused (%d: %s)", parse_valid[_i].url, e, why);
	ck_assert_str_eq(u.canonical, parse_valid[_i].canonical);
	ck_assert_str_eq(u.host, parse_valid[_i].host);
	ck_assert_int_eq(u.port, parse_valid[_i].port);
	ck_assert_int_eq(u.ip, parse_valid[_i].ip);
}
END_TEST

static const struct {
	const char	*url;
	enum urlsafe_err err;
} parse_invalid[] = {
	{ "", URLSAFE_SYNTAX },
	{ "example.com/hook", URLSAFE_SYNTAX },
	{ "ftp://example.com/", URLSAFE_SYNTAX },
	{ "javascript:alert(1)", URLSAFE_SYNTAX },
	{ "//example.com/", URLSAFE_SYNTAX },
	{ "https://", URLSAFE_SYNTAX },
	{ "https:///path", URLSAFE_SYNTAX },
	{ "https://:443/", URLSAFE_SYNTAX },
	{ "https://user@example.com/", URLSAFE_USERINFO },
	{ "https://user:pw@example.com/", URLSAFE_USERINFO },
	{ "https://example.com@127.0.0.1/", URLSAFE_USERINFO },
	{ "https://example.com/#frag", URLSAFE_SYNTAX },
	{ "https://example.com:0/", URLSAFE_SYNTAX },
	{ "https://example.com:65536/", URLSAFE_SYNTAX },
	{ "https://example.com:8a/", URLSAFE_SYNTAX },
	{ "https://example.com:/", URLSAFE_SYNTAX },
	{ "https://example.com:1234567/", URLSAFE_SYNTAX },
	{ "https://exa mple.com/", URLSAFE_SYNTAX },
	{ "https://example.com/a b", URLSAFE_SYNTAX },
	{ "https://example.com\\@127.0.0.1/", URLSAFE_SYNTAX },
	{ "https://example.com/\x01", URLSAFE_SYNTAX },
	{ "https://b\xc3\xbc" "cher.example/", URLSAFE_SYNTAX },
	{ "https://example.com/<script>", URLSAFE_SYNTAX },
	{ "https://example.com/%zz", URLSAFE_SYNTAX },
	{ "https://example.com/a|b", URLSAFE_SYNTAX },
	{ "https://exa_mple.com/", URLSAFE_HOST },
	{ "https://-bad.example/", URLSAFE_HOST },
	{ "https://bad-.example/", URLSAFE_HOST },
	{ "https://a..b.example/", URLSAFE_HOST },
	{ "https://example.com./", URLSAFE_HOST },
	{ "https://exa%6dple.com/", URLSAFE_HOST },
	/* numeric hosts no parser agrees on are errors, not names */
	{ "https://1.2.3.999/", URLSAFE_HOST },
	{ "https://08.0.0.1/", URLSAFE_HOST },
	{ "https://4294967296/", URLSAFE_HOST },
	{ "https://1.2.3.4.5/", URLSAFE_HOST },
	{ "https://host.123/", URLSAFE_HOST },
	{ "https://[::1/", URLSAFE_HOST },
	{ "https://[::1]x/", URLSAFE_SYNTAX },
	{ "https://[fe80::1%25eth0]/", URLSAFE_HOST },
	{ "https://[12345::]/", URLSAFE_HOST },
	{ "https://[example.com]/", URLSAFE_HOST },
};

START_TEST(parse_bad)
{
	struct urlsafe_url u;
	const char *why = NULL;
	enum urlsafe_err e = urlsafe_parse(&a, parse_invalid[_i].url, &u, &why);

	ck_assert_msg(e == parse_invalid[_i].err, "%s: got %d, want %d (%s)",
	    parse_invalid[_i].url, e, parse_invalid[_i].err, why ? why : "accepted");
	ck_assert_msg(why != NULL && *why != '\0', "%s: no reason", parse_invalid[_i].url);
}
END_TEST

START_TEST(parse_too_long)
{
	char url[URLSAFE_URL_MAX + 64];
	struct urlsafe_url u;
	const char *why;
	size_t n;

	n = (size_t)snprintf(url, sizeof(url), "https://example.com/");
	memset(url + n, 'a', URLSAFE_URL_MAX - n);
	url[URLSAFE_URL_MAX] = '\0';
	ck_assert_int_eq(urlsafe_parse(&a, url, &u, &why), URLSAFE_OK);
	strcat(url, "a");
	ck_assert_int_eq(urlsafe_parse(&a, url, &u, &why), URLSAFE_SYNTAX);
	ck_assert_int_eq(urlsafe_parse(&a, NULL, &u, &why), URLSAFE_SYNTAX);
}
END_TEST

/* ---- address classes ---- */

static const struct {
	const char		*addr;
	enum urlsafe_class	 cls;
} classes[] = {
	{ "8.8.8.8", URLSAFE_PUBLIC },
	{ "1.1.1.1", URLSAFE_PUBLIC },
	{ "11.0.0.1", URLSAFE_PUBLIC },
	{ "100.63.255.255", URLSAFE_PUBLIC },
	{ "100.128.0.1", URLSAFE_PUBLIC },
	{ "126.255.255.255", URLSAFE_PUBLIC },
	{ "128.0.0.1", URLSAFE_PUBLIC },
	{ "169.253.1.1", URLSAFE_PUBLIC },
	{ "172.15.255.255", URLSAFE_PUBLIC },
	{ "172.32.0.1", URLSAFE_PUBLIC },
	{ "192.167.1.1", URLSAFE_PUBLIC },
	{ "223.255.255.254", URLSAFE_PUBLIC },
	{ "0.0.0.0", URLSAFE_UNSPECIFIED },
	{ "0.1.2.3", URLSAFE_UNSPECIFIED },
	{ "10.0.0.1", URLSAFE_PRIVATE },
	{ "10.255.255.255", URLSAFE_PRIVATE },
	{ "100.64.0.1", URLSAFE_PRIVATE },
	{ "100.127.255.254", URLSAFE_PRIVATE },
	{ "127.0.0.1", URLSAFE_LOOPBACK },
	{ "127.255.255.254", URLSAFE_LOOPBACK },
	{ "169.254.169.254", URLSAFE_LINK_LOCAL },
	{ "172.16.0.1", URLSAFE_PRIVATE },
	{ "172.31.255.255", URLSAFE_PRIVATE },
	{ "192.0.0.8", URLSAFE_RESERVED },
	{ "192.0.2.1", URLSAFE_RESERVED },
	{ "192.88.99.1", URLSAFE_RESERVED },
	{ "192.168.1.1", URLSAFE_PRIVATE },
	{ "198.18.0.1", URLSAFE_RESERVED },
	{ "198.19.255.255", URLSAFE_RESERVED },
	{ "198.51.100.7", URLSAFE_RESERVED },
	{ "203.0.113.9", URLSAFE_RESERVED },
	{ "224.0.0.1", URLSAFE_MULTICAST },
	{ "239.255.255.250", URLSAFE_MULTICAST },
	{ "240.0.0.1", URLSAFE_RESERVED },
	{ "255.255.255.255", URLSAFE_RESERVED },
	{ "2606:4700:4700::1111", URLSAFE_PUBLIC },
	{ "2a00:1450:4001:80b::200e", URLSAFE_PUBLIC },
	{ "::ffff:8.8.8.8", URLSAFE_PUBLIC },
	{ "64:ff9b::808:808", URLSAFE_PUBLIC },
	{ "2002:808:808::1", URLSAFE_PUBLIC },
	{ "::", URLSAFE_UNSPECIFIED },
	{ "::1", URLSAFE_LOOPBACK },
	{ "::ffff:127.0.0.1", URLSAFE_LOOPBACK },
	{ "::ffff:10.1.2.3", URLSAFE_PRIVATE },
	{ "::ffff:169.254.169.254", URLSAFE_LINK_LOCAL },
	{ "::ffff:0.0.0.0", URLSAFE_UNSPECIFIED },
	{ "::127.0.0.1", URLSAFE_LOOPBACK },
	{ "::8.8.8.8", URLSAFE_RESERVED },
	{ "64:ff9b::7f00:1", URLSAFE_LOOPBACK },
	{ "64:ff9b:1::1", URLSAFE_PRIVATE },
	{ "2002:7f00:1::1", URLSAFE_LOOPBACK },
	{ "2002:c0a8:101::1", URLSAFE_PRIVATE },
	{ "100::1", URLSAFE_RESERVED },
	{ "2001::1", URLSAFE_RESERVED },
	{ "2001:1ff::1", URLSAFE_RESERVED },
	{ "2001:db8::1", URLSAFE_RESERVED },
	{ "fc00::1", URLSAFE_PRIVATE },
	{ "fd12:3456:789a::1", URLSAFE_PRIVATE },
	{ "fe80::1", URLSAFE_LINK_LOCAL },
	{ "febf::1", URLSAFE_LINK_LOCAL },
	{ "fec0::1", URLSAFE_PRIVATE },
	{ "ff02::1", URLSAFE_MULTICAST },
	{ "3fff::1", URLSAFE_PUBLIC },
	{ "4000::1", URLSAFE_RESERVED },
	{ "1::1", URLSAFE_RESERVED },
};

START_TEST(classify)
{
	struct sockaddr_in6 s6;
	struct sockaddr_in s4;
	enum urlsafe_class c;

	memset(&s4, 0, sizeof(s4));
	memset(&s6, 0, sizeof(s6));
	if (inet_pton(AF_INET, classes[_i].addr, &s4.sin_addr) == 1) {
		s4.sin_family = AF_INET;
		c = urlsafe_classify((struct sockaddr *)&s4);
	} else {
		ck_assert_int_eq(inet_pton(AF_INET6, classes[_i].addr, &s6.sin6_addr), 1);
		s6.sin6_family = AF_INET6;
		c = urlsafe_classify((struct sockaddr *)&s6);
	}
	ck_assert_msg(c == classes[_i].cls, "%s is %s, want %s", classes[_i].addr,
	    urlsafe_class_name(c), urlsafe_class_name(classes[_i].cls));
}
END_TEST

START_TEST(class_names)
{
	for (int c = 0; c < URLSAFE_CLASS__MAX; c++)
		ck_assert_msg(urlsafe_class_name((enum urlsafe_class)c) != NULL &&
		    strcmp(urlsafe_class_name((enum urlsafe_class)c), "unknown") != 0,
		    "class %d has no name", c);
	ck_assert_str_eq(urlsafe_class_name(URLSAFE_CLASS__MAX), "unknown");
}
END_TEST

/* ---- the whole check ---- */

#define H URLSAFE_ALLOW_HTTP
#define P URLSAFE_ALLOW_PRIVATE

static const struct {
	const char	*url;
	unsigned	 flags;
	enum urlsafe_err err;
	const char	*addr;		/* the pinned address when OK */
} checks[] = {
	/* loopback in every spelling */
	{ "http://127.0.0.1/", H, URLSAFE_REFUSED, NULL },
	{ "http://2130706433/", H, URLSAFE_REFUSED, NULL },
	{ "http://0177.0.0.1/", H, URLSAFE_REFUSED, NULL },
	{ "http://0x7f.0.0.1/", H, URLSAFE_REFUSED, NULL },
	{ "http://0x7f000001/", H, URLSAFE_REFUSED, NULL },
	{ "http://017700000001/", H, URLSAFE_REFUSED, NULL },
	{ "http://127.1/", H, URLSAFE_REFUSED, NULL },
	{ "http://127.0.1/", H, URLSAFE_REFUSED, NULL },
	{ "http://0x7f.1/", H, URLSAFE_REFUSED, NULL },
	{ "http://[::1]/", H, URLSAFE_REFUSED, NULL },
	{ "http://[::ffff:127.0.0.1]/", H, URLSAFE_REFUSED, NULL },
	{ "http://[::ffff:7f00:1]/", H, URLSAFE_REFUSED, NULL },
	{ "http://[0:0:0:0:0:ffff:127.0.0.1]/", H, URLSAFE_REFUSED, NULL },
	{ "http://[::127.0.0.1]/", H, URLSAFE_REFUSED, NULL },
	{ "http://[64:ff9b::7f00:1]/", H, URLSAFE_REFUSED, NULL },
	{ "http://localhost/", H, URLSAFE_REFUSED, NULL },
	{ "https://localhost:8443/", 0, URLSAFE_REFUSED, NULL },
	/* metadata, private, unspecified, multicast, reserved */
	{ "http://169.254.169.254/latest/meta-data/", H, URLSAFE_REFUSED, NULL },
	{ "http://2852039166/", H, URLSAFE_REFUSED, NULL },
	{ "http://[::ffff:169.254.169.254]/", H, URLSAFE_REFUSED, NULL },
	{ "http://10.0.0.1/", H, URLSAFE_REFUSED, NULL },
	{ "http://012.0.0.1/", H, URLSAFE_REFUSED, NULL },
	{ "http://172.16.0.1/", H, URLSAFE_REFUSED, NULL },
	{ "http://192.168.0.1/", H, URLSAFE_REFUSED, NULL },
	{ "http://0xc0a80001/", H, URLSAFE_REFUSED, NULL },
	{ "http://100.64.0.1/", H, URLSAFE_REFUSED, NULL },
	{ "http://0.0.0.0/", H, URLSAFE_REFUSED, NULL },
	{ "http://0/", H, URLSAFE_REFUSED, NULL },
	{ "http://[::]/", H, URLSAFE_REFUSED, NULL },
	{ "http://224.0.0.1/", H, URLSAFE_REFUSED, NULL },
	{ "http://255.255.255.255/", H, URLSAFE_REFUSED, NULL },
	{ "http://192.0.2.1/", H, URLSAFE_REFUSED, NULL },
	{ "http://[fc00::1]/", H, URLSAFE_REFUSED, NULL },
	{ "http://[fd00:ec2::254]/", H, URLSAFE_REFUSED, NULL },
	{ "http://[fe80::1]/", H, URLSAFE_REFUSED, NULL },
	{ "http://[ff02::1]/", H, URLSAFE_REFUSED, NULL },
	{ "http://[2001:db8::1]/", H, URLSAFE_REFUSED, NULL },
	/* public addresses pass, pinned to the checked address */
	{ "https://8.8.8.8/hook", 0, URLSAFE_OK, "8.8.8.8" },
	{ "https://134744072/hook", 0, URLSAFE_OK, "8.8.8.8" },
	{ "https://010.010.010.010/", 0, URLSAFE_OK, "8.8.8.8" },
	{ "https://0x8.0x8.0x8.0x8/", 0, URLSAFE_OK, "8.8.8.8" },
	{ "https://1.1.1.1:8443/x?y=z", 0, URLSAFE_OK, "1.1.1.1" },
	{ "https://[2606:4700:4700::1111]/", 0, URLSAFE_OK, "2606:4700:4700::1111" },
	{ "https://[::ffff:8.8.8.8]/", 0, URLSAFE_OK, "::ffff:8.8.8.8" },
	{ "http://8.8.8.8/", H | P, URLSAFE_OK, "8.8.8.8" },
	/* https only unless allowed (sandbox) */
	{ "http://8.8.8.8/", 0, URLSAFE_SCHEME, NULL },
	{ "http://8.8.8.8/", P, URLSAFE_SCHEME, NULL },
	/* allow_private_targets (dev, tests): still parsed, resolved, pinned */
	{ "http://127.0.0.1:9/", H | P, URLSAFE_OK, "127.0.0.1" },
	{ "http://0x7f.1:9/", H | P, URLSAFE_OK, "127.0.0.1" },
	{ "http://[::1]:9/", H | P, URLSAFE_OK, "::1" },
	{ "https://10.1.2.3/", P, URLSAFE_OK, "10.1.2.3" },
	{ "https://user:pw@8.8.8.8/", P, URLSAFE_USERINFO, NULL },
	{ "https://1.2.3.999/", P, URLSAFE_HOST, NULL },
	/* parsed only: a name is not looked up */
	{ "https://hooks.example.com/x", URLSAFE_NO_RESOLVE, URLSAFE_OK, "" },
	{ "https://127.0.0.1/", URLSAFE_NO_RESOLVE, URLSAFE_REFUSED, NULL },
};

START_TEST(check)
{
	struct urlsafe_target t;
	const char *why = NULL;
	enum urlsafe_err e = urlsafe_check(&a, checks[_i].url, checks[_i].flags, &t, &why);

	ck_assert_msg(e == checks[_i].err, "%s (flags %u): got %d, want %d (%s)",
	    checks[_i].url, checks[_i].flags, e, checks[_i].err, why ? why : "accepted");
	if (e == URLSAFE_OK) {
		ck_assert_str_eq(t.addr, checks[_i].addr);
		ck_assert_ptr_nonnull(t.url.canonical);
	} else {
		/* the reason is for the client: it never names the address */
		ck_assert_msg(why != NULL && *why != '\0', "%s: no reason", checks[_i].url);
		ck_assert_msg(strstr(why, "127.") == NULL && strstr(why, "169.254") == NULL &&
		    strstr(why, "10.") == NULL, "%s: the reason names an address: %s",
		    checks[_i].url, why);
	}
}
END_TEST

/* ---- libcurl: pinned, no redirect ---- */

/* A listener on 127.0.0.1 (ephemeral port) answering one request with
 * reply, in a child; its pid in *pid, its port returned. */
static int
listener(const char *reply, pid_t *pid)
{
	struct sockaddr_in sa;
	socklen_t len = sizeof(sa);
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	ck_assert_int_ge(fd, 0);
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	ck_assert_int_eq(listen(fd, 4), 0);
	ck_assert_int_eq(getsockname(fd, (struct sockaddr *)&sa, &len), 0);
	*pid = fork();
	ck_assert_int_ge(*pid, 0);
	if (*pid == 0) {
		char buf[8192];
		int c;

		alarm(10);
		if ((c = accept(fd, NULL, NULL)) >= 0) {
			/* the request head is small: one read is enough here */
			(void)read(c, buf, sizeof(buf));
			(void)write(c, reply, strlen(reply));
			shutdown(c, SHUT_WR);
			while (read(c, buf, sizeof(buf)) > 0)
				;
			close(c);
		}
		_exit(0);
	}
	close(fd);
	return ntohs(sa.sin_port);
}

static size_t
drop(char *p, size_t s, size_t n, void *arg)
{
	return s * n;
}

/* Resolution with a deadline: /etc/hosts and numeric names answer; a name
 * that cannot resolve fails, and never later than the deadline (what a
 * resolver that does not answer would otherwise hold). */
START_TEST(resolve_within_deadline)
{
	struct addrinfo hints, *res = NULL;
	struct timespec t0, t1;
	long long ms;

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	ck_assert_int_eq(urlsafe_resolve("localhost", &hints, 2000, &res), 0);
	ck_assert_ptr_nonnull(res);
	ck_assert_int_eq(urlsafe_classify(res->ai_addr), URLSAFE_LOOPBACK);
	freeaddrinfo(res);
	hints.ai_flags = AI_NUMERICHOST;
	ck_assert_int_eq(urlsafe_resolve("10.1.2.3", &hints, 0, &res), 0);
	ck_assert_int_eq(urlsafe_classify(res->ai_addr), URLSAFE_PRIVATE);
	freeaddrinfo(res);
	hints.ai_flags = 0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	res = NULL;
	ck_assert_int_ne(urlsafe_resolve("no-such-host.invalid", &hints, 300, &res), 0);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ck_assert_ptr_null(res);
	ms = (t1.tv_sec - t0.tv_sec) * 1000LL + (t1.tv_nsec - t0.tv_nsec) / 1000000;
	ck_assert_msg(ms < 300 + 1000, "took %lld ms", ms);
}
END_TEST

/* The URL names a host that does not exist and port 1; the pin sends the
 * connection to the listener, and the 302 it answers is not followed. */
START_TEST(curl_pinned_no_redirect)
{
	struct urlsafe_target t;
	const char *why;
	char url[128];
	pid_t pid;
	long code = 0;
	int port, st;
	CURL *c;

	port = listener("HTTP/1.1 302 Found\r\nLocation: http://169.254.169.254/\r\n"
	    "Content-Length: 0\r\nConnection: close\r\n\r\n", &pid);
	snprintf(url, sizeof(url), "http://pinned.invalid:%d/hook", port);
	ck_assert_int_eq(urlsafe_check(&a, url, H | URLSAFE_NO_RESOLVE, &t, &why), URLSAFE_OK);
	/* as a resolution would fill them */
	snprintf(t.addr, sizeof(t.addr), "127.0.0.1");
	t.family = AF_INET;
	ck_assert_ptr_nonnull(c = curl_easy_init());
	ck_assert_int_eq(urlsafe_curl_pin(c, &a, &t), 0);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, drop);
	curl_easy_setopt(c, CURLOPT_TIMEOUT, 10L);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	ck_assert_int_eq(curl_easy_perform(c), CURLE_OK);
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
	ck_assert_int_eq(code, 302);
	{
		long redirects = -1;

		curl_easy_getinfo(c, CURLINFO_REDIRECT_COUNT, &redirects);
		ck_assert_int_eq(redirects, 0);
	}
	curl_easy_cleanup(c);
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
}
END_TEST

/* A target that was never resolved cannot be pinned. */
START_TEST(curl_pin_needs_address)
{
	struct urlsafe_target t;
	const char *why;
	CURL *c;

	ck_assert_int_eq(urlsafe_check(&a, "https://hooks.example.com/", URLSAFE_NO_RESOLVE,
	    &t, &why), URLSAFE_OK);
	ck_assert_ptr_nonnull(c = curl_easy_init());
	ck_assert_int_eq(urlsafe_curl_pin(c, &a, &t), -1);
	curl_easy_cleanup(c);
}
END_TEST

static Suite *
urlsafe_suite(void)
{
	Suite *s = suite_create("urlsafe");
	TCase *tc;

	tc = tcase_create("parse");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_loop_test(tc, parse_ok, 0, N(parse_valid));
	tcase_add_loop_test(tc, parse_bad, 0, N(parse_invalid));
	tcase_add_test(tc, parse_too_long);
	suite_add_tcase(s, tc);

	tc = tcase_create("classify");
	tcase_add_loop_test(tc, classify, 0, N(classes));
	tcase_add_test(tc, class_names);
	suite_add_tcase(s, tc);

	tc = tcase_create("check");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_loop_test(tc, check, 0, N(checks));
	suite_add_tcase(s, tc);

	tc = tcase_create("curl");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, resolve_within_deadline);
	tcase_add_test(tc, curl_pinned_no_redirect);
	tcase_add_test(tc, curl_pin_needs_address);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tcheck_run(urlsafe_suite());
}
