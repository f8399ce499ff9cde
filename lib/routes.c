/*
 * The map of the API: every endpoint, its auth and its declared input.
 * The dispatcher enforces all of it before a handler runs.
 */
#include <stddef.h>

#include "health.h"
#include "iam.h"
#include "router.h"

#define IAM ROUTE_IAM

const struct route routes[] = {
	/* method  pattern                                  auth       body                        query handler                   flags */
	{ M_GET,   "/v1/health",                            AUTH_NONE, NULL,                       NULL, health_get,               0 },
	{ M_GET,   "/v1/health/live",                       AUTH_NONE, NULL,                       NULL, health_live,              0 },
	{ M_GET,   "/.well-known/jwks.json",                AUTH_NONE, NULL,                       NULL, iam_jwks,                 0 },

	/* developer accounts (lib/iam_auth.c, lib/iam_account.c) */
	{ M_GET,   "/v1/iam/auth/legal-documents",          AUTH_NONE, NULL,                       NULL, iam_legal_documents,      IAM },
	{ M_POST,  "/v1/iam/auth/signup",                   AUTH_NONE, iam_signup_fields,          NULL, iam_signup,               IAM },
	{ M_POST,  "/v1/iam/auth/confirm-signup",           AUTH_NONE, iam_confirm_fields,         NULL, iam_confirm_signup,       IAM },
	{ M_POST,  "/v1/iam/auth/confirm-and-signin",       AUTH_NONE, iam_confirm_signin_fields,  NULL, iam_confirm_and_signin,   IAM },
	{ M_POST,  "/v1/iam/auth/signin",                   AUTH_NONE, iam_signin_fields,          NULL, iam_signin,               IAM },
	{ M_POST,  "/v1/iam/auth/signout",                  AUTH_JWT,  iam_signout_fields,         NULL, iam_signout,              IAM },
	{ M_POST,  "/v1/iam/auth/refresh",                  AUTH_NONE, iam_refresh_fields,         NULL, iam_refresh,              IAM },
	{ M_POST,  "/v1/iam/auth/forgot-password",          AUTH_NONE, iam_forgot_fields,          NULL, iam_forgot_password,      IAM },
	{ M_POST,  "/v1/iam/auth/reset-password",           AUTH_NONE, iam_reset_fields,           NULL, iam_reset_password,       IAM },
	{ M_POST,  "/v1/iam/auth/change-password",          AUTH_JWT,  iam_change_password_fields, NULL, iam_change_password,      IAM },
	{ M_GET,   "/v1/iam/auth/me",                       AUTH_JWT,  NULL,                       NULL, iam_me,                   IAM },
	{ M_POST,  "/v1/iam/auth/email/request-verification", AUTH_JWT, NULL,                      NULL, iam_email_request,        IAM },
	{ M_POST,  "/v1/iam/auth/email/verify",             AUTH_JWT,  iam_verify_code_fields,     NULL, iam_email_verify,         IAM },
	{ M_POST,  "/v1/iam/verification-request",          AUTH_JWT,  iam_verification_fields,    NULL, iam_verification_request, IAM },
	{ M_POST,  "/v1/iam/request-live-access",           AUTH_JWT,  NULL,                       NULL, iam_request_live_access,  IAM },
};
const size_t routes_count = sizeof(routes) / sizeof(routes[0]);
