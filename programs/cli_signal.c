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
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cli.h"

/* The temporary file a signal removes: an absolute name, as the handler may run after a
 * chdir (create -C). */
static char *volatile cleanup_path;

/* The signals that end the process after removing cleanup_path. The first N_DEFERRABLE may
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

/* Holds back the signals that remove cleanup_path while it changes, and lets them through. */
static void hold_signals(sigset_t *old)
{
	sigset_t set;
	sigemptyset(&set);
	for (size_t i = 0; i < N_FATAL; i++)
		sigaddset(&set, fatal_signals[i]);
	sigprocmask(SIG_BLOCK, &set, old);
}

int cli_open_replacement(const char *final, const struct stat *like, char **tmp)
{
	*tmp = NULL;
	const char *slash = strrchr(final, '/');
	size_t dlen = slash ? (size_t)(slash - final) + 1 : 0;
	char cwd[4096];
	const char *dir = final[0] != '/' && getcwd(cwd, sizeof(cwd)) ? cwd : NULL;
	char *t = malloc(strlen(final) + 9);
	char *abs = malloc((dir ? strlen(dir) + 1 : 0) + strlen(final) + 9);
	if (!t || !abs) {
		free(t);
		free(abs);
		errno = ENOMEM;
		return -1;
	}
	memcpy(t, final, dlen);
	/* ".NAME.XXXXXX", or where that would pass the 255 bytes a name may have, a shorter one
	 * (allocated for: NAME is then longer than what replaces it) */
	if (strlen(final + dlen) + 8 > 255)
		strcpy(t + dlen, ".znippy.XXXXXX");
	else
		sprintf(t + dlen, ".%s.XXXXXX", final + dlen);
	sigset_t old;
	hold_signals(&old); /* no signal between creating the file and registering it */
	int fd = mkostemp(t, O_CLOEXEC);
	int e = errno;
	if (fd >= 0) {
		sprintf(abs, "%s%s%s", dir ? dir : "", dir ? "/" : "", t);
		cleanup_path = abs;
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
	if (fd >= 0) { /* mkostemp made it 0600 */
		mode_t mask = umask(0);
		umask(mask);
		if (like && fchown(fd, geteuid() ? (uid_t)-1 : like->st_uid, like->st_gid))
			(void)0; /* not a member of its group: ours, as for a new file */
		fchmod(fd, like ? like->st_mode & 0777 : 0666 & ~mask);
		*tmp = t;
		return fd;
	}
	free(t);
	free(abs);
	struct stat st;
	if ((e == EACCES || e == EPERM || e == EROFS) && stat(final, &st) == 0 &&
	    S_ISREG(st.st_mode)) {
		fd = open(final, O_WRONLY | O_TRUNC | O_NOCTTY | O_CLOEXEC);
		if (fd >= 0)
			return fd;
		e = errno;
	}
	errno = e;
	return -1;
}

void cli_replacement_done(char *tmp)
{
	sigset_t old;
	hold_signals(&old);
	char *abs = cleanup_path;
	cleanup_path = NULL;
	sigprocmask(SIG_SETMASK, &old, NULL);
	free(abs);
	free(tmp);
}

static void on_fatal_signal(int sig)
{
	const char *p = cleanup_path;
	if (p)
		unlink(p);
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
	const char *p = cleanup_path;
	if (p)
		unlink(p);
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
