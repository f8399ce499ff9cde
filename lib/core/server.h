#ifndef BDS_SERVER_H
#define BDS_SERVER_H
/*
 * The FastCGI process model. The master owns the listening socket, forks
 * workers, respawns the dead, drains on SIGTERM and replaces workers one by
 * one on SIGHUP. A worker accepts and serves one request at a time.
 */
struct config;
struct req;

/* Listening socket: a unix path (created with mode, and group when not
 * NULL or ""), or inherited (systemd LISTEN_FDS, or fd 0 as spawn-fcgi
 * passes it). -1 on failure (ENOENT: no such group). */
int	 server_listen_path(const char *path, int mode, const char *group);
int	 server_listen_inherited(void);

/*
 * What the master re-executes on SIGHUP (binary upgrade, same pid): path
 * (searched in PATH when it has no '/') and argv, both kept by the caller;
 * socket_to_unlink is passed on (NULL: the socket was inherited). Without
 * it, or when `path --check` fails, SIGHUP is a rolling reload of the
 * workers with the re-read configuration.
 */
void	 server_set_exec(const char *path, char *const argv[], const char *socket_to_unlink);
/* Prefork master; returns the exit status. After an upgrade it adopts the
 * previous image's workers (BDS_UPGRADE_WORKERS) and stops them once its
 * own are forked. */
int	 server_master(const struct config *, const char *config_path, int listen_fd, int workers);
/* Worker loop until SIGTERM (drains the request in flight); exit status. */
int	 server_worker(const struct config *, int listen_fd);

/* Route, authenticate, validate and run the handler for a parsed request. */
void	 dispatch(struct req *);

#endif
