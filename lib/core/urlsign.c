/* Signed URLs (urlsign.h). */
#include <string.h>
#include <time.h>

#include "core/arena.h"
#include "core/config.h"
#include "core/crypto.h"
#include "core/req.h"
#include "core/urlsign.h"

const char *
urlsign_host(const struct req *r)
{
	return r->http.host_env != NULL && strcmp(r->http.host_env, "sandbox") == 0 ?
	    "sandbox" : "live";
}

const char *
urlsign_base(const struct req *r)
{
	return strcmp(urlsign_host(r), "sandbox") == 0 ? r->cfg->sandbox_url : r->cfg->api_url;
}

const char *
urlsign_sig(struct req *r, const char *purpose, const char *id, const char *client_id,
    const char *host, long long expires)
{
	unsigned char k[32], mac[32];
	const char *msg;

	crypto_hmac_sha256(r->cfg->secret_key, sizeof(r->cfg->secret_key), purpose,
	    strlen(purpose), k);
	msg = arena_printf(r->arena, "%s\n%s\n%s\n%lld", id, client_id, host, expires);
	crypto_hmac_sha256(k, sizeof(k), msg, strlen(msg), mac);
	return crypto_b64url_encode(r->arena, mac, sizeof(mac));
}

enum urlsign_check
urlsign_check(struct req *r, const char *purpose, const char *id, const char *client_id,
    const char *sig, long long expires)
{
	if (sig == NULL || client_id == NULL ||
	    !crypto_ct_streq(urlsign_sig(r, purpose, id, client_id, urlsign_host(r), expires), sig))
		return URLSIGN_BAD;
	return expires < (long long)time(NULL) ? URLSIGN_EXPIRED : URLSIGN_OK;
}
