#!/bin/sh
# make-man.sh HOOKRELAY OUT.1.gz: hookrelay(1) from the binary's own --help (help2man), with a
# COMMANDS section holding each subcommand's --help, and the packaged paths. Run by the build
# (target hookrelay_man, cmake/packaging.cmake) for the .deb.
set -eu
bin=$1
out=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# roff-safe preformatted text: backslashes escaped, a leading . or ' not taken as a request.
roff_pre() {
  printf '.nf\n'
  sed -e 's/…/.../g' -e 's/\\/\\e/g' -e "s/^\\([.']\\)/\\\\\\&\\1/"
  printf '.fi\n'
}

{
  printf '[COMMANDS]\n'
  # The subcommands, as `hookrelay --help` lists them (two spaces, a name, spaces, a summary).
  "$bin" --help | sed -n '/^Subcommands:/,$p' | sed -n 's/^  \([a-z][a-z-]*\) .*/\1/p' |
    while read -r sub; do
      printf '.SS "hookrelay %s"\n' "$sub"
      "$bin" "$sub" --help | roff_pre
    done
  cat <<'H2M'
[FILES]
.TP
.I /etc/hookrelay/hookrelay.toml
The configuration (a conffile, 0640 root:hookrelay): \fBhookrelay serve \-\-config\fR reads it.
.TP
.I /etc/hookrelay/hookrelay.env
HOOKRELAY_TOKEN (the admin token) and HOOKRELAY_URL, made at install, root only; the service
unit reads it.
.TP
.I /var/lib/hookrelay
The data directory (0700 hookrelay): the embedded store, master.key, the admin token's hash.
Kept when the package is purged.
.TP
.I /lib/systemd/system/hookrelay.service
The hardened service unit (Type=notify, watchdog, SIGHUP reloads).
[ENVIRONMENT]
.TP
.B HOOKRELAY_TOKEN
The admin token for serve (its hash is stored) and the token the management commands send.
.TP
.B HOOKRELAY_URL
The API address the management commands use (default http://127.0.0.1:8080; the package's
management listener is http://127.0.0.1:8081).
.TP
.B HOOKRELAY_MASTER_KEY
The master key that opens the stored secrets; wins over [store] master_key_file.
[SEE ALSO]
.BR systemd.exec (5),
.BR journalctl (1)
H2M
} >"$work/include.h2m"

help2man --no-info --no-discard-stderr --section 1 \
  --name "webhook relay: record every webhook durably, deliver it with retries, replay it" \
  --include "$work/include.h2m" --output "$work/hookrelay.1" "$bin"
gzip -9n <"$work/hookrelay.1" >"$out.tmp"
mv -f "$out.tmp" "$out"
