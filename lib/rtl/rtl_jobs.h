#ifndef BDS_RTL_JOBS_H
#define BDS_RTL_JOBS_H
/*
 * The job kinds of lib/rtl (rtl_jobs.c): what links tells a request to
 * link of its token's flow (links_connect.h's LINKS_JOB_*), queued in the
 * transaction of the change and applied by bds-jobs. RTL_JOB_KINDS is the
 * rows of lib/jobs/jobs.c's kinds table (name, fetch, apply, max_attempts,
 * lease_s, failed).
 */
#include "jobs/jobs.h"
#include "links/links_connect.h"

struct req;

/* LINKS_JOB_SESSION_STARTED: the session's request PENDING -> IN_PROGRESS. */
enum jobs_outcome rtl_session_started_apply(struct req *, struct jobs_job *);
/* LINKS_JOB_LINK_ACTIVATED: the request COMPLETED; hosted: link_token.completed. */
enum jobs_outcome rtl_link_activated_apply(struct req *, struct jobs_job *);

#define RTL_JOB_KINDS \
	{ LINKS_JOB_SESSION_STARTED, NULL, rtl_session_started_apply, 5, 60, NULL }, \
	{ LINKS_JOB_LINK_ACTIVATED, NULL, rtl_link_activated_apply, 5, 60, NULL }

#endif
