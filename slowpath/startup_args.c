/* SPDX-License-Identifier: BSD-3-Clause
 *
 * The command line before EAL runs. EAL takes the arguments before "--"
 * and the daemon its own after; --help and --version are answered first,
 * without EAL (which would print only its own usage, and needs hugepages
 * or --no-huge to get even that far), and the daemon's own flags are
 * checked before EAL too, so that a typo is reported on any machine. When
 * EAL fails, the two causes a new user meets are named.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "hourglass.h"	/* HG_VERSION */
#include "startup_args.h"

static int
dashdash(int argc, char **argv)
{
	int i;

	for (i = 1; i < argc; i++)
		if (strcmp(argv[i], "--") == 0)
			return i;
	return argc;
}

int
hg_startup_args(int argc, char **argv, int *eal_argc)
{
	int dd = dashdash(argc, argv), i, rc;
	char *none[] = { argv[0], NULL }, *saved;

	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--version") == 0) {
			printf("hourglassd (Hourglass) %s\n", HG_VERSION);
			return 1;
		}
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			hg_config_usage(stdout);
			return 1;
		}
		if (strcmp(argv[i], "--help-eal") == 0)
			return 2;
	}
	*eal_argc = dd;
	if (dd == argc)
		return hg_config_parse_args(1, none);
	/* the program's name in the place of "--", for getopt's messages */
	saved = argv[dd];
	argv[dd] = argv[0];
	rc = hg_config_parse_args(argc - dd, argv + dd);
	argv[dd] = saved;
	return rc;
}

/* The value of EAL's option name (--name V or --name=V), or def. */
static const char *
eal_opt(int argc, char **argv, const char *name, const char *def)
{
	size_t n = strlen(name);
	int i;

	for (i = 1; i < argc; i++) {
		if (strncmp(argv[i], name, n) != 0)
			continue;
		if (argv[i][n] == '=')
			return argv[i] + n + 1;
		if (argv[i][n] == '\0')
			return i + 1 < argc ? argv[i + 1] : def;
	}
	return def;
}

/* The pid holding EAL's lock for prefix, or 0. EAL write-locks its
 * runtime directory's config file for as long as the primary runs. */
static pid_t
prefix_owner(const char *prefix)
{
	const char *base = getenv("XDG_RUNTIME_DIR");
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
	char path[512];
	int fd;

	snprintf(path, sizeof(path), "%s/dpdk/%s/config",
		 geteuid() == 0 ? "/var/run" : base ? base : "/tmp", prefix);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return 0;
	if (fcntl(fd, F_GETLK, &fl) < 0 || fl.l_type == F_UNLCK)
		fl.l_pid = 0;
	close(fd);
	return fl.l_pid;
}

static int
hugepages_total(void)
{
	FILE *f = fopen("/proc/meminfo", "r");
	char line[128];
	int n = -1;

	if (f == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) != NULL)
		if (sscanf(line, "HugePages_Total: %d", &n) == 1)
			break;
	fclose(f);
	return n;
}

int
hg_eal_failure(int argc, char **argv, const char *reason)
{
	const char *prefix = eal_opt(argc, argv, "--file-prefix", "rte");
	pid_t owner = prefix_owner(prefix);
	int i, no_huge = 0;

	for (i = 1; i < argc; i++)
		no_huge |= strcmp(argv[i], "--no-huge") == 0;
	if (owner > 0)
		fprintf(stderr, "hourglassd: EAL cannot start: process %d already "
			"runs with --file-prefix %s; give each DPDK process its "
			"own\n", (int)owner, prefix);
	else if (!no_huge && hugepages_total() == 0)
		fprintf(stderr, "hourglassd: EAL cannot start: this machine has no "
			"hugepages; add --no-huge -m 512 before '--', or reserve "
			"some (dpdk-hugepages.py --setup 1G)\n");
	else
		fprintf(stderr, "hourglassd: EAL cannot start%s%s (its own lines "
			"above say why; hourglassd --help-eal lists its options)\n",
			reason[0] ? ": " : "", reason);
	return owner > 0;
}
