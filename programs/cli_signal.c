/* SPDX-License-Identifier: MIT */
/* cli_signal.c - signals, and the outputs they clean up: a file that replaces another only once
 * complete (removed by a fatal signal), work that stops when told (extract), an archive that
 * shrinks under its mapping (SIGBUS), and the open-files limit. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

/* The temporary file a signal removes: its name in the directory cleanup_dir: an absolute name
 * (AT_FDCWD), as the handler may run after a chdir (create -C), or a name in a directory held
 * open, as the path above it may change (gunzip -r). */
static volatile int cleanup_dir = -1;
static const char *volatile cleanup_name;

/* The signals that end the process after removing the temporary file. The first N_DEFERRABLE may
 * instead be deferred (cli_defer_signals); SIGXFSZ never is (the write that raised it fails). */
static const int fatal_signals[] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE, SIGXFSZ};
#define N_FATAL      (sizeof(fatal_signals) / sizeof(fatal_signals[0]))
#define N_DEFERRABLE 4

/* Installs `to` for the first n fatal signals whose handler is `from` (NULL: any that is not
 * SIG_IGN, so a signal ignored at start stays ignored). */
static void replace_handlers(size_t n, void (*from)(int), void (*to)(int), int flags)
{
	struct sigaction sa, old;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = to;
	sa.sa_flags = flags;
	for (size_t i = 0; i < n; i++)
		if (sigaction(fatal_signals[i], NULL, &old) == 0 &&
		    (from ? old.sa_handler == from : old.sa_handler != SIG_IGN))
			sigaction(fatal_signals[i], &sa, NULL);
}

/* Holds back the signals that remove the temporary file while it changes, and lets them through.
 */
static void hold_signals(sigset_t *old)
{
	sigset_t set;
	sigemptyset(&set);
	for (size_t i = 0; i < N_FATAL; i++)
		sigaddset(&set, fatal_signals[i]);
	sigprocmask(SIG_BLOCK, &set, old);
}

/* An unpredictable name ".BASE.XXXXXX" (or where that would pass the 255 bytes a name may have,
 * ".znippy.XXXXXX") into buf (256 bytes), as mkostemp makes them. */
static void temp_name(const char *base, char *buf)
{
	static const char chars[] =
	        "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
	static uint64_t counter;
	uint8_t r[6];
	if (getrandom(r, sizeof(r), GRND_NONBLOCK) != (ssize_t)sizeof(r)) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		uint64_t x = (uint64_t)ts.tv_nsec ^ (uint64_t)getpid() << 32 ^
		             ++counter * 0x9e3779b97f4a7c15u;
		memcpy(r, &x, sizeof(r));
	}
	if (strlen(base) + 8 > 255)
		base = "znippy";
	int n = snprintf(buf, 256, ".%s.", base);
	for (int i = 0; i < 6; i++)
		buf[n + i] = chars[r[i] % (sizeof(chars) - 1)];
	buf[n + 6] = 0;
}

/* Creates the new file `name` in dir, registered for removal by a signal as clean_name in
 * clean_dir. Returns the descriptor, or -1 with errno set. */
static int create_registered(int dir, const char *name, int clean_dir, const char *clean_name)
{
	sigset_t old;
	hold_signals(&old); /* no signal between creating the file and registering it */
	int fd = openat(dir, name, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	int e = errno;
	if (fd >= 0) {
		cleanup_dir = clean_dir;
		cleanup_name = clean_name;
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
	errno = e;
	return fd;
}

/* What cli_replacement_done releases: the directory opened for the temporary file, and its
 * absolute name (for one relative to the current directory, which create -C may change). */
static int owned_dir = -1;
static char *owned_name;

/* The temporary file for `final` (relative to dirfd), its name relative to dirfd in t (the
 * directory part of final, then up to 256 bytes). Returns the descriptor, or -1 with errno set. */
static int create_temp(int dirfd, const char *final, size_t dlen, char *t)
{
	int dir = dirfd, clean_dir = dirfd;
	char *name = t, *clean = t;
	if (dirfd == AT_FDCWD && final[0] != '/') {
		char *cwd = getcwd(NULL, 0); /* NULL: the relative name is the best there is */
		owned_name = cwd ? malloc(strlen(cwd) + dlen + 258) : NULL;
		if (owned_name)
			clean = owned_name + sprintf(owned_name, "%s/", cwd);
		free(cwd);
	} else if (dirfd != AT_FDCWD && dlen) {
		/* Held open: the file is made, and removed by a signal, in the directory that was
		 * there, whatever happens to the path above it. */
		char *parent = strndup(final, dlen);
		owned_dir = parent ? openat(dirfd, parent, O_PATH | O_DIRECTORY | O_CLOEXEC) : -1;
		free(parent);
		if (owned_dir < 0)
			return -1;
		dir = clean_dir = owned_dir;
		name = clean = t + dlen;
	}
	for (int tries = 0; tries < 100; tries++) {
		temp_name(final + dlen, t + dlen);
		if (clean != t && clean != t + dlen)
			strcpy(clean, t); /* after "CWD/" */
		int fd = create_registered(dir, name, clean_dir, owned_name ? owned_name : clean);
		if (fd >= 0 || errno != EEXIST)
			return fd;
	}
	return -1; /* EEXIST */
}

/* Undoes create_temp's registration and frees what it holds. */
static void release_temp(void)
{
	sigset_t old;
	hold_signals(&old);
	cleanup_name = NULL;
	cleanup_dir = -1;
	sigprocmask(SIG_SETMASK, &old, NULL);
	if (owned_dir >= 0)
		close(owned_dir);
	free(owned_name);
	owned_dir = -1;
	owned_name = NULL;
}

int cli_open_replacement_at(int dirfd, const char *final, const struct stat *like, char **tmp)
{
	*tmp = NULL;
	const char *slash = strrchr(final, '/');
	size_t dlen = slash ? (size_t)(slash - final) + 1 : 0;
	char *t = malloc(dlen + 256);
	if (!t) {
		errno = ENOMEM;
		return -1;
	}
	memcpy(t, final, dlen);
	int fd = create_temp(dirfd, final, dlen, t);
	int e = errno;
	if (fd >= 0) { /* made 0600 */
		mode_t mask = umask(0);
		umask(mask);
		if (like && fchown(fd, geteuid() ? (uid_t)-1 : like->st_uid, like->st_gid))
			(void)0; /* not a member of its group: ours, as for a new file */
		fchmod(fd, like ? like->st_mode & 0777 : 0666 & ~mask);
		*tmp = t;
		return fd;
	}
	release_temp();
	free(t);
	struct stat st;
	if ((e == EACCES || e == EPERM || e == EROFS) && fstatat(dirfd, final, &st, 0) == 0 &&
	    S_ISREG(st.st_mode)) {
		fd = openat(dirfd, final, O_WRONLY | O_TRUNC | O_NOCTTY | O_CLOEXEC);
		if (fd >= 0)
			return fd;
		e = errno;
	}
	errno = e;
	return -1;
}

int cli_open_replacement(const char *final, const struct stat *like, char **tmp)
{
	return cli_open_replacement_at(AT_FDCWD, final, like, tmp);
}

void cli_replacement_done(char *tmp)
{
	release_temp();
	free(tmp);
}

/* Removes the registered temporary file; async-signal-safe. */
static void remove_temp(void)
{
	const char *name = cleanup_name;
	if (name)
		unlinkat(cleanup_dir, name, 0);
}

static void on_fatal_signal(int sig)
{
	remove_temp();
	signal(sig, SIG_DFL);
	raise(sig);
}

static volatile sig_atomic_t stop_signal;

/* The mapped archive an extraction reads (cli_survive_truncation), and whether it shrank. */
static volatile uintptr_t bus_base;
static volatile size_t bus_len;
static size_t bus_page;
static volatile sig_atomic_t bus_hit;

/* Archives (and gzip inputs) are read through memory maps: if a file shrinks under the reader
 * (another program truncates it) or its storage fails, the access raises SIGBUS. That is an I/O
 * error, reported as one, not a crash. While an extraction reads a registered archive, a page
 * of it past the new end is replaced by zeros, which fail the checksums, and the extraction is
 * told to stop, as by SIGINT: it removes the files it began and did not finish. */
static void on_sigbus(int sig, siginfo_t *si, void *uc)
{
	(void)sig, (void)uc;
	uintptr_t a = (uintptr_t)si->si_addr, base = bus_base;
	if (base && si->si_code == BUS_ADRERR && a - base < bus_len) {
		void *page = (void *)(a & ~(uintptr_t)(bus_page - 1));
		/* The system call itself: a sanitizer's mmap() would take the new page for a write
		 * racing with the threads that read the archive. */
		const long flags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED;
		if (syscall(SYS_mmap, page, bus_page, (long)PROT_READ, flags, -1L, 0L) ==
		    (long)page) {
			__atomic_store_n(&bus_hit, 1, __ATOMIC_RELAXED); /* from any worker */
			sig_atomic_t none = 0; /* a signal that came first keeps its say */
			__atomic_compare_exchange_n(&stop_signal, &none, SIGBUS, 0,
			                            __ATOMIC_RELAXED, __ATOMIC_RELAXED);
			return;
		}
	}
	static const char msg[] = "znippy: an input file was truncated or could not be read while "
	                          "in use (SIGBUS)\n";
	remove_temp();
	(void)!write(STDERR_FILENO, msg, sizeof(msg) - 1);
	_exit(EXIT_SYSTEM);
}

void cli_survive_truncation(const void *base, uint64_t len)
{
	bus_page = (size_t)sysconf(_SC_PAGESIZE);
	bus_len = (size_t)len;
	bus_base = (uintptr_t)base;
}

int cli_truncation_seen(void)
{
	bus_base = 0;
	return __atomic_load_n(&bus_hit, __ATOMIC_RELAXED);
}

void cli_raise_fd_limit(void)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) || rl.rlim_cur >= rl.rlim_max)
		return;
	rl.rlim_cur = rl.rlim_max < (1u << 20) ? rl.rlim_max : (1u << 20);
	setrlimit(RLIMIT_NOFILE, &rl);
}

static void on_deferred_signal(int sig)
{
	__atomic_store_n(&stop_signal, sig, __ATOMIC_RELAXED); /* read by the library's threads */
}

void cli_defer_signals(void)
{
	/* SA_RESTART: the handler returns, and other calls carry on until the work stops. */
	replace_handlers(N_DEFERRABLE, NULL, on_deferred_signal, SA_RESTART);
}

const volatile sig_atomic_t *cli_stop_flag(void)
{
	return &stop_signal;
}

void cli_end_deferred_signals(void)
{
	replace_handlers(N_DEFERRABLE, on_deferred_signal, on_fatal_signal, 0);
	int sig = __atomic_load_n(&stop_signal, __ATOMIC_RELAXED);
	if (sig && sig != SIGBUS) /* a truncated archive: cli_truncation_seen() tells */
		on_fatal_signal(sig);
}

void cli_install_signals(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_sigbus;
	sa.sa_flags = SA_SIGINFO;
	sigaction(SIGBUS, &sa, NULL);
	replace_handlers(N_FATAL, NULL, on_fatal_signal, 0);
}
