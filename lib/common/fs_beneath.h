/* SPDX-License-Identifier: MIT */
/* fs_beneath.h - symlink-proof directory opening below a root, for extractors. */
#ifndef ZN_FS_BENEATH_H
#define ZN_FS_BENEATH_H

/* Open directory `rel` (NUL-terminated, relative, with no "." or ".." component) below rootfd,
 * never following a symlink (openat2 with RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS, or where the
 * kernel lacks it, component by component with O_NOFOLLOW); with `create`, missing components
 * are made (mode 0777 less the umask). Returns an O_PATH descriptor, which anchors *at() calls,
 * or -1 with errno set (ELOOP or ENOTDIR where a symlink or a file is in the way). "" opens a
 * duplicate of rootfd. Thread-safe. */
int zn_open_dir_beneath(int rootfd, const char *rel, int create);

#endif
