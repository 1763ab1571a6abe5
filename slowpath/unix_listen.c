/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <libgen.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "log.h"
#include "unix_listen.h"

/* The socket's directory, made if missing (one level: /run/hourglass);
 * a deeper path that does not exist is the operator's to make. */
static int
mkdir_parent(const char *flag, const char *path)
{
	char dir[108];

	snprintf(dir, sizeof(dir), "%s", path);
	if (mkdir(dirname(dir), 0755) < 0 && errno != EEXIST) {
		HG_LOG(ERR, "%s %s: cannot make its directory %s: %s", flag,
		       path, dir, strerror(errno));
		return -1;
	}
	return 0;
}

static socklen_t
address(const char *path, struct sockaddr_un *sa)
{
	size_t n = strlen(path);

	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	memcpy(sa->sun_path, path, n);
	if (path[0] == '@')
		sa->sun_path[0] = '\0';
	else
		n++;
	return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n);
}

/* A socket whose daemon still answers is in use; a file that refuses
 * connections was left by a crash and is removed. */
static int
claim_path(const char *flag, const char *path, int type)
{
	struct sockaddr_un sa;
	socklen_t len = address(path, &sa);
	int fd = socket(AF_UNIX, type | SOCK_CLOEXEC, 0), rc, err;

	if (fd < 0)
		return 0;
	rc = connect(fd, (struct sockaddr *)&sa, len);
	err = errno;
	close(fd);
	if (rc == 0) {
		HG_LOG(ERR, "%s %s: another daemon is listening there (stop it, "
		       "or give this one another path)", flag, path);
		return -1;
	}
	if (err == ECONNREFUSED && path[0] != '@')
		unlink(path);
	return 0;
}

int
hg_unix_listen(const char *flag, const char *path, int type, mode_t mode)
{
	struct sockaddr_un sa;
	socklen_t len;
	int fd;

	if (strlen(path) >= sizeof(sa.sun_path) || path[0] == '\0') {
		HG_LOG(ERR, "%s '%s': not a socket path (1 to %zu bytes)", flag,
		       path, sizeof(sa.sun_path) - 1);
		return -1;
	}
	if ((path[0] != '@' && mkdir_parent(flag, path) < 0) ||
	    claim_path(flag, path, type) < 0)
		return -1;
	len = address(path, &sa);
	fd = socket(AF_UNIX, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, len) < 0 ||
	    (path[0] != '@' && chmod(path, mode) < 0) || listen(fd, 128) < 0) {
		HG_LOG(ERR, "%s %s: %s", flag, path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

void
hg_unix_unlink(const char *path)
{
	if (path[0] != '\0' && path[0] != '@')
		unlink(path);
}
