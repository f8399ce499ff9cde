#ifndef BDS_LOG_H
#define BDS_LOG_H
/*
 * One JSON line per request (request_id, method, route, status,
 * duration_us, client_id, error_code) and JSON lines for process events.
 * Never log a secret, token, password, PAN or CVV: only these fields.
 */
struct req;

int	 log_open(const char *path);	/* NULL, "" or "-" = stderr; 0 ok */
void	 log_request(const struct req *, long long duration_us);
void	 log_msg(const char *level, const char *fmt, ...)
	    __attribute__((format(printf, 2, 3)));

#endif
