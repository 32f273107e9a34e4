# SPDX-License-Identifier: MIT
# bash completion for znippy -*- shell-script -*-
# Made by `znippy --bash-completion` from the option tables the commands read;
# install as $(pkg-config --variable=completionsdir bash-completion)/znippy,
# or source it.
_znippy() {
	local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD - 1]}
	local opts='' argopts='' values=''
	COMPREPLY=()
	# --option=VALUE: bash breaks the words at '=' (prev is then "--option=")
	if [ "$cur" = = ]; then
		prev=$prev= cur=''
	elif [ "$prev" = = ] && [ "$COMP_CWORD" -gt 2 ]; then
		prev=${COMP_WORDS[COMP_CWORD - 2]}=
	fi
	if [ "$COMP_CWORD" -eq 1 ]; then
		COMPREPLY=($(compgen -W 'create extract list verify cat info diff index gunzip zcat bunzip2 bzcat unzstd zstdcat unzip -h --help -V --version --bash-completion' -- "$cur"))
		return
	fi
	case ${COMP_WORDS[1]} in
	create|c)
		opts='-o -l -T -C -X -v -q -h --output --level --threads --chunk-size --memory --no-skip --digest --digest-min-size --exclude --directory --progress --quiet --help --no-dedup --no-packages --repo --one-file-system --files-from --null --exclude-from --no-recursion --owner --group --numeric-owner --mode --mtime --clamp-mtime --verbose --exclude-vcs --ultra'
		argopts='-o -l -T -C -X --output --level --threads --chunk-size --memory --digest --digest-min-size --exclude --directory --repo --files-from --exclude-from --owner --group --mode --mtime'
		case $prev in
		-o | --output | --output=) values="-f" ;;
		--digest | --digest=) values="-W 'sha256 none'" ;;
		-C | --directory | --directory=) values="-d" ;;
		--files-from | --files-from=) values="-f" ;;
		-X | --exclude-from | --exclude-from=) values="-f" ;;
		--owner | --owner=) values="-u" ;;
		--group | --group=) values="-g" ;;
		--mtime | --mtime=) values="-f" ;;
		esac
		;;
	extract|x)
		opts='-C -T -X -O -p -k -m -v -q -h --directory --threads --overwrite --progress --check-digest --numeric-owner --no-sparse --strip-components --skip-old-files --preserve-permissions --same-permissions --no-same-permissions --verbose --same-owner --no-same-owner --keep-old-files --exclude --exclude-from --package-type --package --repo --to-stdout --touch --no-overwrite-dir --force --quiet --help'
		argopts='-C -T -X --directory --threads --strip-components --exclude --exclude-from --package-type --package --repo'
		case $prev in
		-C | --directory | --directory=) values="-d" ;;
		-X | --exclude-from | --exclude-from=) values="-f" ;;
		esac
		;;
	list|ls|t)
		opts='-l -v -X -h --long --json --verbose --exclude --exclude-from --package-type --package --repo --help'
		argopts='-X --exclude --exclude-from --package-type --package --repo'
		case $prev in
		--json=) values="-W 'lines array'" ;;
		-X | --exclude-from | --exclude-from=) values="-f" ;;
		esac
		;;
	verify)
		opts='-T -q -h --threads --progress --quiet --help'
		argopts='-T --threads'
		;;
	cat)
		opts='-h --offset --length --help'
		argopts='--offset --length'
		;;
	info)
		opts='-h --help'
		argopts=''
		;;
	diff|d|compare)
		opts='-C -h --directory --help'
		argopts='-C --directory'
		case $prev in
		-C | --directory | --directory=) values="-d" ;;
		esac
		;;
	index)
		opts='-o -f -h --output --format --help'
		argopts='-o -f --output --format'
		case $prev in
		-o | --output | --output=) values="-f" ;;
		-f | --format | --format=) values="-W 'arrow jsonl csv'" ;;
		esac
		;;
	gunzip)
		opts='-c -d -k -f -t -q -n -r -l -v -N -S -o -T -h -V --stdout --to-stdout --decompress --keep --force --test --quiet --no-name --name --recursive --list --verbose --suffix --output --threads --export-index --import-index --offset --length --help --version'
		argopts='-S -o -T --suffix --output --threads --export-index --import-index --offset --length'
		case $prev in
		-o | --output | --output=) values="-f" ;;
		esac
		;;
	zcat)
		opts='-c -d -k -f -t -q -n -r -l -v -N -S -o -T -h -V --stdout --to-stdout --decompress --keep --force --test --quiet --no-name --name --recursive --list --verbose --suffix --output --threads --export-index --import-index --offset --length --help --version'
		argopts='-S -o -T --suffix --output --threads --export-index --import-index --offset --length'
		case $prev in
		-o | --output | --output=) values="-f" ;;
		esac
		;;
	bunzip2)
		opts='-c -d -k -f -t -q -v -T -h -V --stdout --decompress --keep --force --test --quiet --verbose --threads --help --version'
		argopts='-T --threads'
		;;
	bzcat)
		opts='-c -d -k -f -t -q -v -T -h -V --stdout --decompress --keep --force --test --quiet --verbose --threads --help --version'
		argopts='-T --threads'
		;;
	unzstd)
		opts='-c -d -k -f -t -q -v -o -D -M -T -h -V --stdout --decompress --uncompress --keep --rm --force --test --quiet --verbose --long --memory --threads --help --version'
		argopts='-o -D -M -T --memory --threads'
		;;
	zstdcat)
		opts='-c -d -k -f -t -q -v -o -D -M -T -h -V --stdout --decompress --uncompress --keep --rm --force --test --quiet --verbose --long --memory --threads --help --version'
		argopts='-o -D -M -T --memory --threads'
		;;
	unzip)
		opts='-d -l -v -Z -t -p -o -n -j -q -x -T -h --json --help'
		argopts='-d -Z -x -T'
		;;
	*)
		COMPREPLY=($(compgen -f -- "$cur"))
		return
		;;
	esac
	if [ -n "$values" ]; then
		eval "COMPREPLY=(\$(compgen $values -- \"\$cur\"))"
		return
	fi
	case " $argopts " in
	*" $prev "* | *" ${prev%=} "*) return ;; # a number, a size, a pattern
	esac
	case $cur in
	-*) COMPREPLY=($(compgen -W "$opts" -- "$cur")) ;;
	*) COMPREPLY=($(compgen -f -- "$cur")) ;;
	esac
}
complete -o filenames -F _znippy znippy
