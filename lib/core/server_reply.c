/*
 * The response writer: status, headers and body of a finished request onto
 * its FastCGI stream.
 */
#include <string.h>
#include <strings.h>

#include <fcgiapp.h>

#include "core/http.h"
#include "core/json.h"
#include "core/req.h"
#include "core/server_reply.h"

/* FCGX_PutStr of a literal */
#define PUT_LIT(s, out) FCGX_PutStr((s), (int)sizeof(s) - 1, (out))

static void
put_num(unsigned long long v, FCGX_Stream *out)
{
	char d[24];
	int i = (int)sizeof(d);

	do {
		d[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v != 0);
	FCGX_PutStr(d + i, (int)sizeof(d) - i, out);
}

static int
own_cache_control(const struct req *r)
{
	for (size_t i = 0; i < r->nheaders; i++)
		if (strcasecmp(r->headers[i].key, "Cache-Control") == 0)
			return 1;
	return 0;
}

/*
 * Status, headers and the body, written in pieces (no formatting: this is
 * on every request's path). Content-Length is always sent, so HEAD (answered
 * as GET without the body) carries the same headers as GET.
 */
void
server_reply_write(struct req *r, FCGX_Request *fr)
{
	const char *body = NULL, *text = http_status_text(r->status);
	size_t blen = 0;

	/* Written from where the text lives until the reset, not copied (a
	 * sync page is ~750 KB). */
	if (r->out != NULL)
		body = json_text(r->out, &blen);
	PUT_LIT("Status: ", fr->out);
	put_num((unsigned)r->status, fr->out);
	PUT_LIT(" ", fr->out);
	FCGX_PutS(text, fr->out);
	if (body != NULL)
		PUT_LIT("\r\nContent-Type: application/json; charset=utf-8", fr->out);
	if (r->status != 204) {
		PUT_LIT("\r\nContent-Length: ", fr->out);
		put_num(blen, fr->out);
	}
	PUT_LIT("\r\nX-Request-Id: ", fr->out);
	FCGX_PutS(r->http.request_id, fr->out);
	/* no-store unless the handler chose its own (one header, not two) */
	if (!own_cache_control(r))
		PUT_LIT("\r\nCache-Control: no-store", fr->out);
	PUT_LIT("\r\nX-Content-Type-Options: nosniff\r\n", fr->out);
	for (size_t i = 0; i < r->nheaders; i++) {
		FCGX_PutS(r->headers[i].key, fr->out);
		PUT_LIT(": ", fr->out);
		FCGX_PutS(r->headers[i].val, fr->out);
		PUT_LIT("\r\n", fr->out);
	}
	PUT_LIT("\r\n", fr->out);
	if (body != NULL && !r->http.head)
		FCGX_PutStr(body, (int)blen, fr->out);
}
