#ifndef BDS_NODUMP_H
#define BDS_NODUMP_H
/*
 * A process that holds secrets in memory (a card number in a request
 * body, the keys of the config) never writes a core dump: RLIMIT_CORE 0,
 * hard limit too, and PR_SET_DUMPABLE 0 (no core, no ptrace by another
 * user, /proc/<pid>/mem closed). Both are inherited by forked workers.
 * Call first thing in main(). 0, or -1 with errno (the caller refuses to
 * start).
 */
int	 nodump(void);

#endif
