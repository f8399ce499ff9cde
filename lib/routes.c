/*
 * The map of the API: every endpoint, its auth and its declared input.
 * The dispatcher enforces all of it before a handler runs.
 */
#include <stddef.h>

#include "billers/billers.h"
#include "bills/bills_api.h"
#include "bills/bills_statement.h"
#include "bills/bills_status.h"
#include "bills/bills_sync.h"
#include "events/activity.h"
#include "iam/iam_clients.h"
#include "core/health.h"
#include "iam/iam.h"
#include "imports/imports_api.h"
#include "imports/imports_review.h"
#include "insights/insights.h"
#include "links/links.h"
#include "core/router.h"
#include "links/links_connect.h"
#include "links/links_auth.h"
#include "links/links_page.h"
#include "messages/messages.h"
#include "metering/metering.h"
#include "pay/pay.h"
#include "webhooks/webhooks.h"
#include "rtl/rtl.h"
#include "sandboxes/sandboxes.h"

const struct route routes[] = {
	/* method  pattern                                  auth       body                        query handler                   flags */
	{ M_GET,   "/v1/health",                            AUTH_NONE, NULL,                       NULL, health_get,               0 },
	{ M_GET,   "/v1/health/live",                       AUTH_NONE, NULL,                       NULL, health_live,              0 },
	{ M_GET,   "/.well-known/jwks.json",                AUTH_NONE, NULL,                       NULL, iam_jwks,                 0 },

	/* developer accounts (lib/iam/iam_auth.c, lib/iam/iam_account.c); sign-in,
	 * confirm and reset keep their own transactions: a wrong password or code
	 * answers 4xx and its count must still commit */
	{ M_GET,   "/v1/iam/auth/legal-documents",          AUTH_NONE, NULL,                       NULL, iam_legal_documents, 0 },
	{ M_POST,  "/v1/iam/auth/signup",                   AUTH_NONE, iam_signup_fields,          NULL, iam_signup, ROUTE_TX },
	{ M_POST,  "/v1/iam/auth/confirm-signup",           AUTH_NONE, iam_confirm_fields,         NULL, iam_confirm_signup, 0 },
	{ M_POST,  "/v1/iam/auth/confirm-and-signin",       AUTH_NONE, iam_confirm_signin_fields,  NULL, iam_confirm_and_signin, 0 },
	{ M_POST,  "/v1/iam/auth/signin",                   AUTH_NONE, iam_signin_fields,          NULL, iam_signin, 0 },
	{ M_POST,  "/v1/iam/auth/signout",                  AUTH_JWT,  iam_signout_fields,         NULL, iam_signout, ROUTE_TX },
	{ M_POST,  "/v1/iam/auth/refresh",                  AUTH_NONE, iam_refresh_fields,         NULL, iam_refresh, 0 },
	{ M_POST,  "/v1/iam/auth/forgot-password",          AUTH_NONE, iam_forgot_fields,          NULL, iam_forgot_password, ROUTE_TX },
	{ M_POST,  "/v1/iam/auth/reset-password",           AUTH_NONE, iam_reset_fields,           NULL, iam_reset_password, 0 },
	{ M_POST,  "/v1/iam/auth/change-password",          AUTH_JWT,  iam_change_password_fields, NULL, iam_change_password, ROUTE_TX },
	{ M_GET,   "/v1/iam/auth/me",                       AUTH_JWT,  NULL,                       NULL, iam_me, 0 },
	{ M_POST,  "/v1/iam/auth/email/request-verification", AUTH_JWT, NULL,                      NULL, iam_email_request, ROUTE_TX },
	{ M_POST,  "/v1/iam/auth/email/verify",             AUTH_JWT,  iam_verify_code_fields,     NULL, iam_email_verify, ROUTE_TX },
	{ M_POST,  "/v1/iam/verification-request",          AUTH_JWT,  iam_verification_fields,    NULL, iam_verification_request, 0 },
	{ M_POST,  "/v1/iam/request-live-access",           AUTH_JWT,  NULL,                       NULL, iam_request_live_access, 0 },

	/* clients, client secrets and the key's identity (lib/iam/iam_clients.c, lib/iam/iam_secrets.c) */
	{ M_GET,   "/v1/iam/clients",                       AUTH_JWT,  NULL,                       NULL, iam_clients_list, 0 },
	{ M_POST,  "/v1/iam/clients",                       AUTH_JWT,  iam_clients_create_fields,  NULL, iam_clients_create, ROUTE_TX },
	{ M_GET,   "/v1/iam/clients/{id}",                  AUTH_JWT,  NULL,                       NULL, iam_clients_get, 0 },
	{ M_PUT,   "/v1/iam/clients/{id}",                  AUTH_JWT,  iam_clients_update_fields,  NULL, iam_clients_update, ROUTE_TX },
	{ M_DELETE, "/v1/iam/clients/{id}",                 AUTH_JWT,  NULL,                       NULL, iam_clients_delete, 0 },
	{ M_GET,   "/v1/iam/clients/{id}/embed-origins",    AUTH_NONE, NULL,                       NULL, iam_clients_embed_origins, 0 },
	{ M_POST,  "/v1/iam/clients/{id}/client-secrets",   AUTH_JWT,  iam_secrets_create_fields,  NULL, iam_secrets_create, ROUTE_ONCE | ROUTE_IDEM_REQUIRED },
	{ M_GET,   "/v1/iam/clients/{id}/client-secrets",   AUTH_JWT,  NULL,                       NULL, iam_secrets_list, 0 },
	{ M_GET,   "/v1/iam/clients/{id}/client-secrets/{environment}", AUTH_JWT, NULL,            NULL, iam_secrets_get, 0 },
	{ M_DELETE, "/v1/iam/clients/{id}/client-secrets/{environment}", AUTH_JWT, NULL,           NULL, iam_secrets_revoke, 0 },
	{ M_POST,  "/v1/iam/clients/{id}/client-secrets/{environment}/rotate", AUTH_JWT, iam_secrets_rotate_fields, NULL, iam_secrets_rotate, ROUTE_ONCE | ROUTE_IDEM_REQUIRED },
	{ M_GET,   "/v1/identity",                          AUTH_KEY,  NULL,                       NULL, iam_secrets_identity,     0 },

	/* webhook subscriptions (lib/iam_webhooks.c: the developer's; lib/webhook_endpoints.c: the client's own, by API key) */
	{ M_POST,  "/v1/iam/clients/{clientId}/webhooks",   AUTH_JWT,  webhooks_iam_create_fields,  NULL, webhooks_iam_create, ROUTE_ONCE | ROUTE_IDEM_REQUIRED },
	{ M_GET,   "/v1/iam/clients/{clientId}/webhooks",   AUTH_JWT,  NULL,                       NULL, webhooks_iam_list, 0 },
	{ M_DELETE, "/v1/iam/clients/{clientId}/webhooks/{webhookId}", AUTH_JWT, NULL,             NULL, webhooks_iam_delete, ROUTE_TX },
	{ M_POST,  "/v1/iam/clients/{clientId}/webhooks/{webhookId}/test", AUTH_JWT, webhooks_iam_test_fields, NULL, webhooks_iam_test, 0 },
	{ M_GET,   "/v1/iam/clients/{clientId}/client-secrets/{environment}/webhook", AUTH_JWT, NULL, NULL, webhooks_iam_primary_get, 0 },
	{ M_PUT,   "/v1/iam/clients/{clientId}/client-secrets/{environment}/webhook", AUTH_JWT, webhooks_iam_put_fields, NULL, webhooks_iam_primary_put, ROUTE_TX },
	{ M_GET,   "/v1/webhook-endpoints",                 AUTH_KEY,  NULL,                       NULL, webhooks_endpoints_list,   0 },
	{ M_POST,  "/v1/webhook-endpoints",                 AUTH_KEY,  webhooks_endpoints_create_fields, NULL, webhooks_endpoints_create, ROUTE_ONCE | ROUTE_IDEM_REQUIRED },
	{ M_GET,   "/v1/webhook-endpoints/{id}",            AUTH_KEY,  NULL,                       NULL, webhooks_endpoints_get,    0 },
	{ M_PATCH, "/v1/webhook-endpoints/{id}",            AUTH_KEY,  webhooks_endpoints_update_fields, NULL, webhooks_endpoints_update, ROUTE_TX },
	{ M_DELETE, "/v1/webhook-endpoints/{id}",           AUTH_KEY,  NULL,                       NULL, webhooks_endpoints_delete, ROUTE_TX },
	{ M_POST,  "/v1/webhook-endpoints/{id}/rotate-secret", AUTH_KEY, webhooks_endpoints_rotate_fields, NULL, webhooks_endpoints_rotate, ROUTE_ONCE },

	/* events: the activity feed, replay and the sandbox trigger (lib/activity.c) */
	{ M_GET,   "/v1/activity",                          AUTH_KEY,  NULL,                       activity_list_query, activity_list, ROUTE_READ },
	{ M_POST,  "/v1/activity/replay",                   AUTH_KEY,  activity_replay_fields,     NULL, activity_replay,          ROUTE_IDEM },
	{ M_GET,   "/v1/activity/{event_id}",               AUTH_KEY,  NULL,                       NULL, activity_get,             ROUTE_READ },
	{ M_POST,  "/v1/triggers/{event_type}",             AUTH_KEY,  NULL,                       NULL, activity_trigger,         ROUTE_SANDBOX | ROUTE_ANY_BODY | ROUTE_IDEM },

	/* usage metering (lib/metering/metering_api.c); the developer's JWT
	 * names one of its clients with client_id */
	{ M_GET,   "/v1/metering/usage",                    AUTH_KEY | AUTH_JWT, NULL,             metering_usage_query, metering_usage, 0 },
	{ M_GET,   "/v1/metering/summary",                  AUTH_KEY | AUTH_JWT, NULL,             metering_summary_query, metering_summary, 0 },

	/* the biller catalog (lib/billers/billers.c); {id} answers 401 NEEDS_RESIGNIN
	 * without a valid credential */
	{ M_GET,   "/v1/billers",                           AUTH_KEY,  NULL,                       billers_list_query, billers_list, 0 },
	{ M_GET,   "/v1/billers/search/by-email",           AUTH_KEY,  NULL,                       billers_by_email_query, billers_by_email, 0 },
	{ M_GET,   "/v1/billers/{id}",                      AUTH_KEY | AUTH_JWT, NULL,             NULL, billers_get_route,        ROUTE_RESIGNIN },

	/* links (lib/links/links_api.c; GET also takes the developer's JWT) */
	{ M_GET,   "/v1/links",                             AUTH_KEY,  NULL,                       links_list_query, links_list, ROUTE_READ },
	{ M_GET,   "/v1/links/{id}",                        AUTH_KEY | AUTH_JWT, NULL,             NULL, links_get_one,            ROUTE_RESIGNIN | ROUTE_READ },
	/* the same link under the name its bills and the sync call use */
	{ M_GET,   "/v1/account-links/{id}",                AUTH_KEY | AUTH_JWT, NULL,             NULL, links_get_one,            ROUTE_RESIGNIN | ROUTE_READ },
	{ M_DELETE, "/v1/links/{id}",                       AUTH_KEY,  NULL,                       NULL, links_delete,             ROUTE_TX },
	{ M_POST,  "/v1/links/{id}/refresh",                AUTH_KEY,  NULL,                       NULL, links_refresh,            ROUTE_TX },
	{ M_POST,  "/v1/links/{id}/access-token",           AUTH_KEY,  NULL,                       NULL, links_access_token,       ROUTE_TX },
	/* sandbox account links (lib/links/links_sandbox.c) */
	{ M_POST,  "/v1/sandbox/account-links",             AUTH_KEY,  links_sandbox_create_fields, NULL, links_sandbox_create,    ROUTE_SANDBOX | ROUTE_IDEM | ROUTE_IDEM_REQUIRED },
	{ M_POST,  "/v1/sandbox/links/{id}/reset-login",    AUTH_KEY,  NULL,                       NULL, links_sandbox_reset_login, ROUTE_SANDBOX | ROUTE_TX },
	{ M_POST,  "/v1/sandbox/links/{id}/advance",        AUTH_KEY,  NULL,                       NULL, links_sandbox_advance,    ROUTE_SANDBOX | ROUTE_TX },
	/* anonymous sandboxes (lib/sandboxes/sandboxes_api.c): made with no
	 * credential (nginx limits it per address), claimed by a developer */
	{ M_POST,  "/v1/sandboxes",                         AUTH_NONE, sandboxes_create_fields,    NULL, sandboxes_create,         ROUTE_SANDBOX | ROUTE_TX },
	{ M_GET,   "/v1/sandboxes/{sandbox_id}/inbox",      AUTH_KEY,  NULL,                       sandboxes_inbox_query, sandboxes_inbox, ROUTE_SANDBOX },
	{ M_POST,  "/v1/sandboxes/{sandbox_id}/claim",      AUTH_JWT,  sandboxes_claim_fields,     NULL, sandboxes_claim,          ROUTE_SANDBOX | ROUTE_TX },
	{ M_GET,   "/v1/sandboxes/{sandbox_id}/evaluation-proof", AUTH_KEY | AUTH_JWT, NULL,       NULL, sandboxes_proof,          ROUTE_SANDBOX },

	/* bills (lib/bills/): the read API (bills_api.c), the delta sync
	 * (bills_sync.c), statement documents (bills_statement.c: the
	 * download's signature is its credential, nginx streams the file) and
	 * the status a client reports (bills_status.c). AUTH_LINK: the link's
	 * access token, which sees its link's bills only */
	{ M_GET,   "/v1/bills",                             AUTH_KEY,  NULL,                       bills_list_query, bills_list, ROUTE_READ },
	{ M_GET,   "/v1/bills/{id}",                        AUTH_KEY | AUTH_LINK, NULL,            NULL, bills_get,                ROUTE_READ },
	{ M_GET,   "/v1/bills/{id}/payments",               AUTH_KEY,  NULL,                       bills_payments_query, bills_payments, ROUTE_READ },
	{ M_POST,  "/v1/bills/{id}/mark-paid",              AUTH_KEY,  bills_mark_paid_fields,     NULL, bills_mark_paid,          ROUTE_IDEM },
	{ M_GET,   "/v1/bills/{id}/statement",              AUTH_KEY | AUTH_LINK, NULL,            NULL, bills_statement_get,      0 },
	{ M_GET,   "/v1/statements/{id}",                   AUTH_NONE, NULL,                       bills_statement_download_query, bills_statement_download, 0 },
	{ M_GET,   "/v1/account-links/{link_id}/bills/sync", AUTH_KEY | AUTH_LINK, NULL,            bills_sync_query, bills_sync, ROUTE_READ },
	{ M_GET,   "/v1/account-links/{link_id}/payments",  AUTH_KEY,  NULL,                       bills_payments_query, bills_link_payments, ROUTE_READ },

	/* bill imports (lib/imports/): create, complete_upload, GET, DELETE
	 * (imports_api.c); the signed upload target nginx writes into a file
	 * and the source document nginx serves (imports_upload.c) */
	{ M_POST,  "/v1/bill_imports",                      AUTH_KEY,  imports_create_fields,      NULL, imports_create,           ROUTE_IDEM | ROUTE_IDEM_REQUIRED },
	{ M_GET,   "/v1/bill_imports/{id}",                 AUTH_KEY,  NULL,                       NULL, imports_get_route,        ROUTE_USER_HEADER },
	{ M_DELETE, "/v1/bill_imports/{id}",                AUTH_KEY,  NULL,                       NULL, imports_cancel,           ROUTE_TX | ROUTE_USER_HEADER },
	{ M_PUT,   "/v1/bill_imports/{id}/upload",          AUTH_NONE, NULL,                       imports_upload_query, imports_upload, ROUTE_TX },
	{ M_POST,  "/v1/bill_imports/{id}/complete_upload", AUTH_KEY,  imports_complete_fields,    NULL, imports_complete_upload,  ROUTE_TX },
	{ M_GET,   "/v1/bill_imports/{id}/source_document", AUTH_KEY,  NULL,                       NULL, imports_source_document,  ROUTE_USER_HEADER },
	{ M_GET,   "/v1/bill_imports/{id}/source_document/content", AUTH_NONE, NULL,               imports_document_query, imports_document_download, 0 },
	/* review and commit (lib/imports/imports_review.c): the row lock in the
	 * transaction makes one winner per draft_version */
	{ M_PATCH, "/v1/bill_imports/{id}/review_draft",    AUTH_KEY,  imports_review_fields,      NULL, imports_review,           ROUTE_TX | ROUTE_USER_HEADER },
	{ M_POST,  "/v1/bill_imports/{id}/confirm",         AUTH_KEY,  imports_confirm_fields,     NULL, imports_confirm,          ROUTE_TX | ROUTE_USER_HEADER },

	/* the connect flow (lib/links/links_tokens.c, links_sessions.c,
	 * links_exchange.c): the ticket call's bearer is the link token and the
	 * session routes' the session token (or the link token), both resolved
	 * in the handlers; browsers of the link host and of the client's
	 * allowedOrigins may call the session routes (ROUTE_CORS) */
	{ M_POST,  "/v1/link-tokens",                       AUTH_KEY,  links_token_create_fields,  NULL, links_token_create,       ROUTE_TX },
	{ M_POST,  "/v1/link-tokens/{linkTokenId}/exchange", AUTH_KEY, links_exchange_fields,      NULL, links_exchange,           ROUTE_TX },
	{ M_POST,  "/v1/biller-connect/ticket",             AUTH_NONE, links_ticket_fields,        NULL, links_ticket_create,      ROUTE_TX | ROUTE_CORS | ROUTE_LINK_TOKEN },
	{ M_POST,  "/v1/link-sessions",                     AUTH_NONE, links_session_create_fields, NULL, links_session_create,    ROUTE_TX | ROUTE_CORS },
	{ M_GET,   "/v1/link-sessions/billers",             AUTH_NONE, NULL,                       links_session_billers_query, links_session_billers, ROUTE_CORS | ROUTE_SESSION_TOKEN },
	{ M_POST,  "/v1/link-sessions/connect",             AUTH_NONE, links_session_connect_fields, NULL, links_session_connect,  ROUTE_TX | ROUTE_CORS | ROUTE_SESSION_TOKEN },
	{ M_GET,   "/v1/link-sessions/current",             AUTH_NONE, NULL,                       NULL, links_session_current,    ROUTE_CORS | ROUTE_SESSION_TOKEN },
	{ M_POST,  "/v1/link-sessions/mfa",                 AUTH_NONE, links_session_mfa_fields,   NULL, links_session_mfa,        ROUTE_TX | ROUTE_CORS | ROUTE_SESSION_TOKEN },
	{ M_POST,  "/v1/link-sessions/mfa/resend",          AUTH_NONE, NULL,                       NULL, links_session_mfa_resend, ROUTE_TX | ROUTE_CORS | ROUTE_SESSION_TOKEN },
	{ M_POST,  "/v1/link-sessions/biller-request",      AUTH_NONE, rtl_biller_request_fields,  NULL, rtl_biller_request,       ROUTE_TX | ROUTE_CORS | ROUTE_SESSION_TOKEN },
	{ M_POST,  "/v1/link-sessions/exit",                AUTH_NONE, links_session_exit_fields,  NULL, links_session_exit,       ROUTE_TX | ROUTE_CORS | ROUTE_SESSION_TOKEN },

	/* insights (lib/insights/insights_api.c): found by the engine in
	 * bds-jobs, moved by the client; user_aid names the end user */
	{ M_GET,   "/v1/insights",                          AUTH_KEY,  NULL,                       insights_list_query, insights_list, 0 },
	{ M_GET,   "/v1/insights/{id}",                     AUTH_KEY,  NULL,                       insights_user_query, insights_get, 0 },
	{ M_POST,  "/v1/insights/{id}/snooze",              AUTH_KEY,  insights_snooze_fields,     insights_user_query, insights_snooze, ROUTE_TX },
	{ M_POST,  "/v1/insights/{id}/dismiss",             AUTH_KEY,  NULL,                       insights_user_query, insights_dismiss, ROUTE_TX },
	{ M_POST,  "/v1/insights/{id}/resolve",             AUTH_KEY,  insights_resolve_fields,    insights_user_query, insights_resolve, ROUTE_TX },
	/* pay (lib/pay/): pay tokens (pay_tokens.c), payment methods
	 * (pay_methods.c: the card wiped when the request ends) and payment
	 * attempts (pay_payments.c), gated by the deployment's pay.execution.
	 * The link host's card page calls the two AUTH_PAYTOKEN-only ones */
	{ M_POST,  "/v1/pay-tokens",                        AUTH_KEY,  pay_tokens_create_fields,   NULL, pay_tokens_create,        ROUTE_TX },
	{ M_GET,   "/v1/pay-tokens/current",                AUTH_PAYTOKEN, NULL,                   NULL, pay_tokens_current,       0 },
	{ M_POST,  "/v1/pay/sessions",                      AUTH_KEY,  pay_sessions_create_fields, NULL, pay_sessions_create,      ROUTE_TX },
	{ M_POST,  "/v1/pay/payment-methods",               AUTH_KEY | AUTH_LINK | AUTH_PAYTOKEN, pay_methods_create_fields, NULL, pay_methods_create, ROUTE_SECRET_BODY },
	{ M_GET,   "/v1/pay/payment-methods",               AUTH_KEY,  NULL,                       pay_methods_list_query, pay_methods_list, 0 },
	{ M_DELETE, "/v1/pay/payment-methods/{id}",         AUTH_KEY,  NULL,                       NULL, pay_methods_delete,       0 },
	{ M_POST,  "/v1/pay/payments",                      AUTH_KEY | AUTH_LINK | AUTH_PAYTOKEN, pay_payments_create_fields, NULL, pay_payments_create, ROUTE_IDEM | ROUTE_IDEM_REQUIRED | ROUTE_IDEM_BODY },
	{ M_GET,   "/v1/pay/payments/{attemptId}",          AUTH_KEY | AUTH_LINK | AUTH_PAYTOKEN, NULL, NULL, pay_payments_get,        0 },

	/* customer messages (lib/messages/): messages to a client's end users,
	 * accepted or suppressed by the client's suppression list and the end
	 * user's consents; a complaint suppresses the user */
	{ M_POST,  "/v1/customer-messages",                 AUTH_KEY,  messages_create_fields,     NULL, messages_create,          ROUTE_IDEM },
	{ M_GET,   "/v1/customer-messages",                 AUTH_KEY,  NULL,                       messages_list_query, messages_list, 0 },
	{ M_GET,   "/v1/customer-messages/{message_id}",    AUTH_KEY,  NULL,                       NULL, messages_get,             0 },
	{ M_POST,  "/v1/customer-messages/{message_id}/complaint", AUTH_KEY, messages_complaint_fields, NULL, messages_complaint, ROUTE_TX },
	{ M_GET,   "/v1/customer-suppressions",             AUTH_KEY,  NULL,                       messages_suppressions_list_query, messages_suppressions_list, 0 },
	{ M_POST,  "/v1/customer-suppressions",             AUTH_KEY,  messages_suppressions_create_fields, NULL, messages_suppressions_create, ROUTE_TX },
	{ M_GET,   "/v1/customer-suppressions/{customer_user_aid}", AUTH_KEY, NULL,               NULL, messages_suppressions_get, 0 },
	{ M_DELETE, "/v1/customer-suppressions/{customer_user_aid}", AUTH_KEY, NULL,              NULL, messages_suppressions_delete, 0 },
	{ M_GET,   "/v1/customers/{customer_user_aid}/consents", AUTH_KEY, NULL,                  NULL, messages_consents_get,    0 },
	{ M_PUT,   "/v1/customers/{customer_user_aid}/consents", AUTH_KEY, messages_consents_fields, NULL, messages_consents_put, ROUTE_TX },
	/* requests to link and biller discovery (lib/rtl/). On
	 * the sandbox host every request-to-link route but creation is 404
	 * NOT_FOUND (ROUTE_LIVE) */
	{ M_POST,  "/v1/request-to-links",                  AUTH_KEY,  rtl_create_fields,          NULL, rtl_create,               ROUTE_IDEM },
	{ M_GET,   "/v1/request-to-links",                  AUTH_KEY,  NULL,                       rtl_list_query, rtl_list,       ROUTE_LIVE },
	{ M_GET,   "/v1/request-to-links/{id}",             AUTH_KEY,  NULL,                       NULL, rtl_get,                  ROUTE_LIVE },
	{ M_PATCH, "/v1/request-to-links/{id}/status",      AUTH_KEY,  rtl_status_fields,          NULL, rtl_status,               ROUTE_LIVE | ROUTE_TX },
	{ M_POST,  "/v1/request-to-links/{id}/cancel",      AUTH_KEY,  rtl_cancel_fields,          NULL, rtl_cancel,               ROUTE_LIVE | ROUTE_IDEM },
	{ M_POST,  "/v1/request-to-links/{id}/proceed",     AUTH_KEY,  NULL,                       NULL, rtl_proceed,              ROUTE_LIVE | ROUTE_ONCE },
	{ M_GET,   "/v1/biller-discoveries",                AUTH_KEY,  NULL,                       rtl_discoveries_query, rtl_discoveries_list, 0 },
	{ M_GET,   "/v1/biller-discoveries/{id}",           AUTH_KEY,  NULL,                       NULL, rtl_discoveries_get,      0 },
	/* the connect page's frame policy (nginx auth_request on /connect) */
	{ M_GET,   "/v1/link-sessions/frame-ancestors",     AUTH_NONE, NULL,                       links_page_frame_query, links_page_frame_ancestors, 0 },
};
const size_t routes_count = sizeof(routes) / sizeof(routes[0]);
/* CORS of the ROUTE_CORS routes: the connect flow's origins */
int (*const routes_cors_allow)(struct req *, const char *) = links_connect_cors_allow;
/* The bearer tokens of the token kinds: prefix, auth kind, the resolver
 * of the module that issues them (core/auth walks it) */
const struct route_token routes_tokens[] = {
	/* prefix      kind           resolver */
	{ "bds_lat_",  AUTH_LINK,     links_auth_token },	/* link access tokens */
	{ "bds_pay_",  AUTH_PAYTOKEN, pay_auth_token },	/* pay tokens */
};
const size_t routes_tokens_count = sizeof(routes_tokens) / sizeof(routes_tokens[0]);
