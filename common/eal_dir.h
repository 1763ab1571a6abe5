/* SPDX-License-Identifier: BSD-3-Clause
 * EAL's runtime folder (/var/run/dpdk/PREFIX): EAL makes it, also under
 * --no-shconf, and never removes it. On a stock Debian /run is in RAM,
 * so every DPDK process that exits removes its own (the daemon and the
 * tools; the tests remove a killed one's). */
#ifndef HG_COMMON_EAL_DIR_H
#define HG_COMMON_EAL_DIR_H

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <unistd.h>

#include <rte_eal.h>

/* Removes the files in dir (EAL's: flat, no subfolders), then dir. Call
 * after rte_eal_cleanup, with a copy of rte_eal_get_runtime_dir(). */
static inline void
hg_eal_dir_remove(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	if (d == NULL)
		return;
	while ((e = readdir(d)) != NULL)
		if (e->d_name[0] != '.')
			unlinkat(dirfd(d), e->d_name, 0);
	closedir(d);
	rmdir(dir);
}

/* For atexit() before rte_eal_init: this process's folder, however it
 * exits (but for a signal that kills it), also when EAL failed. */
static inline void
hg_eal_dir_remove_own(void)
{
	char dir[PATH_MAX];

	snprintf(dir, sizeof(dir), "%s", rte_eal_get_runtime_dir());
	if (dir[0] != '\0')
		hg_eal_dir_remove(dir);
}

#endif /* HG_COMMON_EAL_DIR_H */
