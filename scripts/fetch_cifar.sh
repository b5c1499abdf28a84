#!/usr/bin/env bash
# Fetches and unpacks the CIFAR-10 and/or CIFAR-100 binary archives from the
# official site, checking the published MD5 checksums.
#
# Usage: scripts/fetch_cifar.sh [-d DIR] [cifar10] [cifar100]
#   -d DIR   where to put the archives and the extracted folders (default: $HOME/.cache/vit-train/cifar)
#   With no dataset named, both are fetched.
#
# Afterwards DIR holds cifar-10-binary.tar.gz, cifar-10-batches-bin/,
# cifar-100-binary.tar.gz and cifar-100-binary/; data.OpenCIFAR10/100 accept
# either the archive or the folder. Archives already present with the right
# checksum are not downloaded again. CIFAR_BASE_URL overrides the download
# site (a mirror, or a file:// folder).
set -euo pipefail

dir="$HOME/.cache/vit-train/cifar"
while getopts "d:h" opt; do
	case "$opt" in
	d) dir=$OPTARG ;;
	h) sed -n '2,13p' "$0"; exit 0 ;;
	*) sed -n '2,13p' "$0" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
sets=("$@")
[ ${#sets[@]} -eq 0 ] && sets=(cifar10 cifar100)

base=${CIFAR_BASE_URL:-https://www.cs.toronto.edu/~kriz}

md5of() {
	if command -v md5sum >/dev/null; then
		md5sum "$1" | cut -d' ' -f1
	else
		md5 -q "$1"
	fi
}

download() { # url output
	if command -v curl >/dev/null; then
		curl -fL --retry 3 -o "$2" "$1"
	elif command -v wget >/dev/null; then
		wget -O "$2" "$1"
	else
		echo "fetch_cifar: need curl or wget" >&2
		exit 1
	fi
}

fetch() { # archive md5 folder
	local archive=$1 want=$2 folder=$3 path="$dir/$1"
	if [ -f "$path" ] && [ "$(md5of "$path")" = "$want" ]; then
		echo "$archive: present, checksum ok"
	else
		echo "$archive: downloading $base/$archive"
		download "$base/$archive" "$path.part"
		local got
		got=$(md5of "$path.part")
		if [ "$got" != "$want" ]; then
			echo "fetch_cifar: $archive: MD5 $got, want $want; download discarded" >&2
			rm -f "$path.part"
			exit 1
		fi
		mv "$path.part" "$path"
	fi
	echo "$archive: unpacking into $dir/$folder"
	tar -xzf "$path" -C "$dir"
}

for s in "${sets[@]}"; do
	case "$s" in
	cifar10 | cifar100) ;;
	*) echo "fetch_cifar: unknown dataset $s (want cifar10 or cifar100)" >&2; exit 2 ;;
	esac
done
mkdir -p "$dir"
for s in "${sets[@]}"; do
	case "$s" in
	cifar10) fetch cifar-10-binary.tar.gz c32a1d4ab5d03f1284b67883e8d87530 cifar-10-batches-bin ;;
	cifar100) fetch cifar-100-binary.tar.gz 03b5dce01913d631647c71ecec9e9cb8 cifar-100-binary ;;
	esac
done
