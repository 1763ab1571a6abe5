/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef HG_SLOWPATH_UNIX_LISTEN_H
#define HG_SLOWPATH_UNIX_LISTEN_H

#include <sys/types.h>

/* A listening Unix socket of type (SOCK_STREAM, SOCK_SEQPACKET) at path,
 * non-blocking and close-on-exec; flag names the option in errors. The
 * file gets mode before listen(), so nobody connects through a wider one;
 * its directory is made if missing (one level); a file left by a crash is
 * replaced, one a live daemon listens on is not. A path that starts with
 * '@' is an abstract socket (no file, no mode: anyone on the host may
 * connect). Returns the fd, or -1 after logging why. */
int hg_unix_listen(const char *flag, const char *path, int type, mode_t mode);

/* Removes what hg_unix_listen made at path (nothing for '@'). */
void hg_unix_unlink(const char *path);

#endif /* HG_SLOWPATH_UNIX_LISTEN_H */
