/* SPDX-License-Identifier: MIT */
/* cli_complete.c - `znippy --bash-completion`: the bash completion script, made from the commands'
 * option tables (the ones getopt reads), so that it offers exactly what the commands take. */
#include <stdio.h>
#include <string.h>

#include "cli.h"

/* What an option's value is, for completing it: by the long name, as the commands' help says. */
static const struct {
	const char *option, *kind; /* kind: compgen's arguments */
} value_kinds[] = {
        {"directory", "-d"},
        {"output", "-f"},
        {"exclude-from", "-f"},
        {"files-from", "-f"},
        {"mtime", "-f"},
        {"owner", "-u"},
        {"group", "-g"},
        {"digest", "-W 'sha256 none'"},
        {"json", "-W 'lines array'"},
};

static const char *value_kind(const char *option)
{
	for (size_t i = 0; i < sizeof(value_kinds) / sizeof(value_kinds[0]); i++)
		if (!strcmp(value_kinds[i].option, option))
			return value_kinds[i].kind;
	return NULL; /* a number, a size, a pattern: nothing to offer */
}

/* The short option of a long one, if it has one ('h' for --help, not 1000 for --chunk-size). */
static int short_of(const struct cli_command *c, const struct option *o)
{
	return o->val < 128 && o->val > ' ' && strchr(c->shortopts, o->val) ? o->val : 0;
}

/* The options of c that must have a value, as the script's argopts: "-o --output ..." (not
 * --json[=FORMAT], whose value comes after '=' only). */
static void print_argopts(const struct cli_command *c, const char *s)
{
	const char *sep = "";
	for (const char *p = s; *p; p++)
		if (*p != ':' && p[1] == ':')
			printf("%s-%c", sep, *p), sep = " ";
	for (const struct option *o = c->options; o->name; o++)
		if (o->has_arg == required_argument)
			printf("%s--%s", sep, o->name), sep = " ";
}

/* The case branch of one command: its names, the options it takes (opts), those that take a
 * value (argopts), and how each kind of value is completed (prev ends in '=' for one given as
 * --option=VALUE). */
static void print_command(const struct cli_command *c)
{
	printf("\t%s", c->name);
	for (const char *a = c->aliases; *a;) {
		size_t n = strcspn(a, " ");
		printf("|%.*s", (int)n, a);
		a += n + (a[n] == ' ');
	}
	printf(")\n\t\topts='");
	const char *s = c->shortopts + strspn(c->shortopts, "-+:");
	for (const char *p = s; *p; p++)
		if (*p != ':')
			printf("%s-%c", p == s ? "" : " ", *p);
	for (const struct option *o = c->options; o->name; o++)
		printf(" --%s", o->name);
	printf("'\n\t\targopts='");
	print_argopts(c, s);
	printf("'\n");
	int any = 0;
	for (const struct option *o = c->options; o->name; o++) {
		const char *kind = value_kind(o->name);
		if (!kind || o->has_arg == no_argument)
			continue;
		if (!any++)
			printf("\t\tcase $prev in\n");
		int letter = short_of(c, o);
		printf("\t\t");
		if (letter)
			printf("-%c | ", letter);
		if (o->has_arg == required_argument)
			printf("--%s | ", o->name);
		printf("--%s=) values=\"%s\" ;;\n", o->name, kind);
	}
	if (any)
		printf("\t\tesac\n");
	printf("\t\t;;\n");
}

/* clang-format off */
static const char script_head[] =
	"# SPDX-License-Identifier: MIT\n"
	"# bash completion for znippy -*- shell-script -*-\n"
	"# Made by `znippy --bash-completion` from the option tables the commands read;\n"
	"# install as $(pkg-config --variable=completionsdir bash-completion)/znippy,\n"
	"# or source it.\n"
	"_znippy() {\n"
	"\tlocal cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD - 1]}\n"
	"\tlocal opts='' argopts='' values=''\n"
	"\tCOMPREPLY=()\n"
	"\t# --option=VALUE: bash breaks the words at '=' (prev is then \"--option=\")\n"
	"\tif [ \"$cur\" = = ]; then\n"
	"\t\tprev=$prev= cur=''\n"
	"\telif [ \"$prev\" = = ] && [ \"$COMP_CWORD\" -gt 2 ]; then\n"
	"\t\tprev=${COMP_WORDS[COMP_CWORD - 2]}=\n"
	"\tfi\n"
	"\tif [ \"$COMP_CWORD\" -eq 1 ]; then\n"
	"\t\tCOMPREPLY=($(compgen -W '%s -h --help -V --version --bash-completion' -- \"$cur\"))\n"
	"\t\treturn\n"
	"\tfi\n"
	"\tcase ${COMP_WORDS[1]} in\n";

static const char script_tail[] =
	"\t*)\n"
	"\t\tCOMPREPLY=($(compgen -f -- \"$cur\"))\n"
	"\t\treturn\n"
	"\t\t;;\n"
	"\tesac\n"
	"\tif [ -n \"$values\" ]; then\n"
	"\t\teval \"COMPREPLY=(\\$(compgen $values -- \\\"\\$cur\\\"))\"\n"
	"\t\treturn\n"
	"\tfi\n"
	"\tcase \" $argopts \" in\n"
	"\t*\" $prev \"* | *\" ${prev%=} \"*) return ;; # a number, a size, a pattern\n"
	"\tesac\n"
	"\tcase $cur in\n"
	"\t-*) COMPREPLY=($(compgen -W \"$opts\" -- \"$cur\")) ;;\n"
	"\t*) COMPREPLY=($(compgen -f -- \"$cur\")) ;;\n"
	"\tesac\n"
	"}\n"
	"complete -o filenames -F _znippy znippy\n";
/* clang-format on */

int cli_print_bash_completion(void)
{
	char names[256] = "";
	for (const struct cli_command *const *c = cli_commands; *c; c++) {
		if (c != cli_commands)
			strcat(names, " ");
		strcat(names, (*c)->name);
	}
	printf(script_head, names);
	for (const struct cli_command *const *c = cli_commands; *c; c++)
		print_command(*c);
	fputs(script_tail, stdout);
	return EXIT_OK;
}
