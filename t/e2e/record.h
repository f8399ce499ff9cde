#ifndef BDS_E2E_RECORD_H
#define BDS_E2E_RECORD_H
/*
 * BDS_E2E_RECORD=DIR: every HTTP exchange a suite makes through nginx, and
 * every webhook delivery its receivers take, as one JSON line each in
 * DIR/<suite>.exchanges.jsonl and DIR/<suite>.deliveries.jsonl, for the
 * OpenAPI document's checks (scripts/openapi-check). Secrets are masked
 * where they are written: a masked string keeps its prefix and its shape
 * (letters and digits become x), so a documented pattern still holds;
 * each masked secret, and each bearer token sent, is noted unmasked in
 * DIR/<suite>.secrets.jsonl for scripts/secrets-scan.
 * Without the variable nothing is written.
 */
#include <stddef.h>

struct harness_resp;
struct receiver_req;

void	 record_exchange(const char *method, const char *host, const char *path,
	    const char *const headers[], const void *body, size_t body_len,
	    const struct harness_resp *r);
void	 record_delivery(const struct receiver_req *q);

#endif
