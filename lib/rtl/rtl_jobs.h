#ifndef BDS_RTL_JOBS_H
#define BDS_RTL_JOBS_H
/*
 * The job kinds of lib/rtl (rtl_jobs.c, listed in rtl_module.c): what links
 * tells a request to link of its token's flow (links_connect.h's
 * LINKS_JOB_*), queued in the transaction of the change and applied by
 * bds-jobs.
 */
struct jobs_kind;

/* LINKS_JOB_SESSION_STARTED: the session's request PENDING -> IN_PROGRESS. */
extern const struct jobs_kind rtl_session_started_kind;
/* LINKS_JOB_LINK_ACTIVATED: the request COMPLETED; hosted: link_token.completed. */
extern const struct jobs_kind rtl_link_activated_kind;

#endif
