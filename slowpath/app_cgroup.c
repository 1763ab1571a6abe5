/* SPDX-License-Identifier: BSD-3-Clause
 *
 * Per-tenant CPU groups for the apps (app_cgroup.h). Written by hand: the
 * few files it touches are plain text, and libcgroup is neither in every
 * Debian install nor aware of hybrid hierarchies' rules.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <mntent.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../fastpath/tenant_view.h"
#include "app_cgroup.h"
#include "log.h"

#define CG_PREFIX "tenant-"

/* An app moved into a tenant's group, and where it came from. */
struct cg_app {
	struct cg_app *next;
	pid_t pid;
	char from[PATH_MAX];
};

static struct {
	int on, v2;
	char mount[PATH_MAX];	/* the hierarchy's mount point */
	char base[PATH_MAX];	/* the daemon's own group: a leftover's home */
	char dir[PATH_MAX];	/* our group: base/NAME or mount/NAME */
	struct cg_app *apps;
	pthread_mutex_t lock;
} cg = { .lock = PTHREAD_MUTEX_INITIALIZER };

uint64_t
hg_cg_weight_value(int v2, uint32_t weight)
{
	uint64_t v;

	if (v2) {
		v = weight * 100ull / HG_WEIGHT_ONE;
		return v < 1 ? 1 : v > 10000 ? 10000 : v;
	}
	v = weight * 1024ull / HG_WEIGHT_ONE;
	return v < 2 ? 2 : v > 262144 ? 262144 : v;
}

static int
write_file(const char *dir, const char *file, const char *val)
{
	char path[PATH_MAX + 64];
	ssize_t n;
	int fd, err;

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, file) >= sizeof(path))
		return -ENAMETOOLONG;
	if ((fd = open(path, O_WRONLY | O_CLOEXEC)) < 0)
		return -errno;
	n = write(fd, val, strlen(val));
	err = n < 0 ? -errno : 0;
	close(fd);
	return err;
}

static int
has_word(const char *path, const char *word)
{
	char buf[512], *save = NULL, *w;
	FILE *f = fopen(path, "re");
	int found = 0;

	if (f == NULL)
		return 0;
	if (fgets(buf, sizeof(buf), f) != NULL)
		for (w = strtok_r(buf, " \n", &save); w != NULL && !found;
		     w = strtok_r(NULL, " \n", &save))
			found = strcmp(w, word) == 0;
	fclose(f);
	return found;
}

/* The mount of the hierarchy that has the cpu controller: cgroup v2's if
 * it has it, else v1's (a hybrid system, as Debian's older ones). */
static int
find_mount(void)
{
	char ctl[PATH_MAX + 32];
	struct mntent *m, ent;
	char buf[4096];
	FILE *f = setmntent("/proc/self/mounts", "re");
	int found = 0;

	if (f == NULL)
		return -errno;
	while (!found && (m = getmntent_r(f, &ent, buf, sizeof(buf))) != NULL) {
		if (strcmp(m->mnt_type, "cgroup2") == 0) {
			snprintf(ctl, sizeof(ctl), "%s/cgroup.controllers", m->mnt_dir);
			if (!has_word(ctl, "cpu"))
				continue;
			cg.v2 = 1;
		} else if (strcmp(m->mnt_type, "cgroup") != 0 ||
			   hasmntopt(m, "cpu") == NULL) {
			continue;
		}
		snprintf(cg.mount, sizeof(cg.mount), "%s", m->mnt_dir);
		found = 1;
	}
	endmntent(f);
	return found ? 0 : -ENOENT;
}

/* A process's group in our hierarchy, from /proc/PID/cgroup: v2's line is
 * "0::/path", v1's "N:cpu,cpuacct:/path". */
static int
proc_group(pid_t pid, char *out, size_t len)
{
	char path[64], line[PATH_MAX + 64], *ctrl, *grp, *save = NULL, *w;
	FILE *f;
	int found = 0;

	snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
	if ((f = fopen(path, "re")) == NULL)
		return -errno;
	while (!found && fgets(line, sizeof(line), f) != NULL) {
		line[strcspn(line, "\n")] = '\0';
		if ((ctrl = strchr(line, ':')) == NULL ||
		    (grp = strchr(ctrl + 1, ':')) == NULL)
			continue;
		*grp++ = '\0';
		ctrl++;
		if (cg.v2) {
			found = strcmp(line, "0") == 0 && *ctrl == '\0';
		} else {
			for (w = strtok_r(ctrl, ",", &save); w != NULL && !found;
			     w = strtok_r(NULL, ",", &save))
				found = strcmp(w, "cpu") == 0;
		}
		if (found && (size_t)snprintf(out, len, "%s%s", cg.mount,
					      strcmp(grp, "/") == 0 ? "" : grp) >= len)
			found = -1;
	}
	fclose(f);
	return found == 1 ? 0 : found < 0 ? -ENAMETOOLONG : -ENOENT;
}

static int
make_dir(const char *dir)
{
	if (mkdir(dir, 0755) < 0 && errno != EEXIST)
		return -errno;
	/* v2: a group's children get the controller only if it hands it on */
	return cg.v2 ? write_file(dir, "cgroup.subtree_control", "+cpu") : 0;
}

int
hg_cg_open(const char *name, char *err, size_t len)
{
	int rc;

	if (name[0] == '\0')
		return 0;
	if (strstr(name, "..") != NULL) {
		snprintf(err, len, "app-cgroup '%s': '..' is not allowed", name);
		return -EINVAL;
	}
	if ((rc = find_mount()) < 0) {
		snprintf(err, len, "app-cgroup: no cgroup hierarchy with the cpu "
			 "controller is mounted");
		return rc;
	}
	if ((rc = proc_group(getpid(), cg.base, sizeof(cg.base))) < 0) {
		snprintf(err, len, "app-cgroup: cannot read the daemon's cgroup: %s",
			 strerror(-rc));
		return rc;
	}
	if ((size_t)snprintf(cg.dir, sizeof(cg.dir), "%s/%s",
			     name[0] == '/' ? cg.mount : cg.base,
			     name + (name[0] == '/')) >= sizeof(cg.dir)) {
		snprintf(err, len, "app-cgroup '%s': path too long", name);
		return -ENAMETOOLONG;
	}
	/* v2: the parent must hand the controller on; it refuses (EBUSY)
	 * where the parent holds processes and is not the root */
	if (cg.v2 && name[0] != '/' &&
	    (rc = write_file(cg.base, "cgroup.subtree_control", "+cpu")) < 0) {
		snprintf(err, len, "app-cgroup: cannot enable the cpu controller "
			 "under %s: %s (give a path from the root, '/NAME', or run "
			 "the daemon in a delegated cgroup)", cg.base, strerror(-rc));
		return rc;
	}
	if ((rc = make_dir(cg.dir)) < 0) {
		snprintf(err, len, "app-cgroup: cannot make %s: %s", cg.dir,
			 strerror(-rc));
		return rc;
	}
	cg.on = 1;
	HG_LOG(INFO, "apps' CPU split by tenant weight in %s (cgroup v%d, %s)",
	       cg.dir, cg.v2 ? 2 : 1, cg.v2 ? "cpu.weight" : "cpu.shares");
	return 0;
}

static void
tenant_dir(const char *tenant, char *out, size_t len)
{
	snprintf(out, len, "%s/" CG_PREFIX "%s", cg.dir, tenant);
}

int
hg_cg_tenant(const char *tenant, uint32_t weight)
{
	char dir[PATH_MAX + 80], val[32];
	int rc;

	if (!cg.on)
		return 0;
	tenant_dir(tenant, dir, sizeof(dir));
	if (mkdir(dir, 0755) < 0 && errno != EEXIST) {
		rc = -errno;
		HG_LOG(WARNING, "tenant %s: cannot make %s: %s", tenant, dir,
		       strerror(-rc));
		return rc;
	}
	snprintf(val, sizeof(val), "%lu\n",
		 (unsigned long)hg_cg_weight_value(cg.v2, weight));
	rc = write_file(dir, cg.v2 ? "cpu.weight" : "cpu.shares", val);
	if (rc < 0)
		HG_LOG(WARNING, "tenant %s: cannot set its apps' CPU weight: %s",
		       tenant, strerror(-rc));
	return rc;
}

/* Moves what is left in dir to the daemon's own group, so it can go. */
static void
empty_dir(const char *dir)
{
	char path[PATH_MAX + 32], line[32];
	FILE *f;

	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	if ((f = fopen(path, "re")) == NULL)
		return;
	while (fgets(line, sizeof(line), f) != NULL)
		write_file(cg.base, "cgroup.procs", line);
	fclose(f);
}

void
hg_cg_tenant_gone(const char *tenant)
{
	char dir[PATH_MAX + 80];

	if (!cg.on)
		return;
	tenant_dir(tenant, dir, sizeof(dir));
	empty_dir(dir);
	if (rmdir(dir) < 0 && errno != ENOENT)
		HG_LOG(WARNING, "tenant %s: cannot remove %s: %s", tenant, dir,
		       strerror(errno));
}

int
hg_cg_admit(const char *tenant, pid_t pid)
{
	char dir[PATH_MAX + 80], val[24];
	struct cg_app *a;
	int rc;

	if (!cg.on)
		return 0;
	if ((a = calloc(1, sizeof(*a))) == NULL)
		return -ENOMEM;
	a->pid = pid;
	if ((rc = proc_group(pid, a->from, sizeof(a->from))) == 0) {
		tenant_dir(tenant, dir, sizeof(dir));
		snprintf(val, sizeof(val), "%d\n", (int)pid);
		rc = write_file(dir, "cgroup.procs", val);
	}
	if (rc < 0) {
		HG_LOG(WARNING, "app pid %d of tenant %s stays in its cgroup: %s",
		       (int)pid, tenant, strerror(-rc));
		free(a);
		return rc;
	}
	pthread_mutex_lock(&cg.lock);
	a->next = cg.apps;
	cg.apps = a;
	pthread_mutex_unlock(&cg.lock);
	return 0;
}

void
hg_cg_release(pid_t pid)
{
	struct cg_app **p, *a = NULL;
	char val[24];
	int rc;

	pthread_mutex_lock(&cg.lock);
	for (p = &cg.apps; *p != NULL; p = &(*p)->next)
		if ((*p)->pid == pid) {
			a = *p;
			*p = a->next;
			break;
		}
	pthread_mutex_unlock(&cg.lock);
	if (a == NULL)
		return;
	snprintf(val, sizeof(val), "%d\n", (int)pid);
	/* ESRCH: it has exited, nothing to move; else, if its group has
	 * gone, the daemon's */
	rc = write_file(a->from, "cgroup.procs", val);
	if (rc < 0 && rc != -ESRCH)
		write_file(cg.base, "cgroup.procs", val);
	free(a);
}

void
hg_cg_close(void)
{
	char path[PATH_MAX + 300];
	struct dirent *e;
	DIR *d;

	if (!cg.on)
		return;
	while (cg.apps != NULL)
		hg_cg_release(cg.apps->pid);
	/* the tenants' groups (the daemon does not delete its tenants at
	 * exit), then ours */
	if ((d = opendir(cg.dir)) != NULL) {
		while ((e = readdir(d)) != NULL) {
			if (strncmp(e->d_name, CG_PREFIX, strlen(CG_PREFIX)) != 0)
				continue;
			snprintf(path, sizeof(path), "%s/%s", cg.dir, e->d_name);
			empty_dir(path);
			rmdir(path);
		}
		closedir(d);
	}
	empty_dir(cg.dir);
	if (rmdir(cg.dir) < 0 && errno != ENOENT)
		HG_LOG(WARNING, "cannot remove %s: %s", cg.dir, strerror(errno));
	cg.on = 0;
}
