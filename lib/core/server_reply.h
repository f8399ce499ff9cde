#ifndef BDS_SERVER_REPLY_H
#define BDS_SERVER_REPLY_H
/*
 * The response writer the worker loop (server_worker.c) calls; not for
 * other files.
 */
#include <fcgiapp.h>

struct req;

/*
 * Status, headers and body of r onto fr's output stream. Content-Length is
 * always sent, so HEAD (answered as GET without the body) carries the same
 * headers as GET; the body is written from where its text lives, not copied.
 */
void	 server_reply_write(struct req *r, FCGX_Request *fr);

#endif
