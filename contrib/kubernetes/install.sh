#!/bin/sh
# Runs on each node in the installer DaemonSet's init container (installer.yaml),
# with the node's root at $HOST.  Installs agentrun as `make install` would, adds
# containerd's "agentrun" runtime handler (contrib/containerd/config.toml), and
# restarts containerd if its config changed.  Running it again changes nothing.
# DRY_RUN=1 (for tests): run the node's agentrun without chroot, and do not
# restart containerd.
set -eu

HOST=${HOST:-/host}
PAYLOAD=${PAYLOAD:-/opt/agentrun} # from the image: bin/, libexec/, etc/
SNIPPET=/etc/containerd/conf.d/agentrun.toml
CONF=/etc/containerd/config.toml

log() { echo "agentrun-installer: $*"; }

node_agentrun() {
	if [ -n "${DRY_RUN:-}" ]; then
		"$HOST/usr/local/bin/agentrun" "$@"
	else
		chroot "$HOST" /usr/local/bin/agentrun "$@"
	fi
}

# install_file SRC DST MODE: atomic replace (a running engine may exec DST).
install_file() {
	mkdir -p "$(dirname "$HOST$2")"
	cp "$1" "$HOST$2.new"
	chmod "$3" "$HOST$2.new"
	mv -f "$HOST$2.new" "$HOST$2"
}

install_file "$PAYLOAD/bin/agentrun" /usr/local/bin/agentrun 0755
install_file "$PAYLOAD/libexec/agentrun/agentrun-monitor" /usr/local/libexec/agentrun/agentrun-monitor 0755
# The host policy is the node admin's: only put the default in place.
if [ ! -e "$HOST/etc/agentrun/policy.json" ]; then
	install_file "$PAYLOAD/etc/agentrun/policy.json" /etc/agentrun/policy.json 0644
fi
# agentrun links libseccomp, libcap and yajl: fail here, before containerd is
# told about it, if the node lacks them.
if ! node_agentrun --version >/dev/null; then
	log "agentrun does not run on this node (missing libseccomp2, libcap2 or libyajl2?)"
	exit 1
fi

changed=
if ! cmp -s "$PAYLOAD/containerd/agentrun.toml" "$HOST$SNIPPET"; then
	install_file "$PAYLOAD/containerd/agentrun.toml" "$SNIPPET" 0644
	changed=1
fi
if [ ! -s "$HOST$CONF" ]; then
	# No config: containerd's defaults, plus the import.
	mkdir -p "$HOST/etc/containerd"
	printf 'version = 2\nimports = ["%s"]\n' "$SNIPPET" >"$HOST$CONF"
	changed=1
elif ! grep -q "\"$SNIPPET\"" "$HOST$CONF"; then
	cp "$HOST$CONF" "$HOST$CONF.agentrun-backup"
	if grep -q '^imports *=' "$HOST$CONF"; then
		sed -i "s|^imports *= *\[|imports = [\"$SNIPPET\", |" "$HOST$CONF"
	else
		# A top-level key: before the first table, so the first line will do.
		sed -i "1i imports = [\"$SNIPPET\"]" "$HOST$CONF"
	fi
	changed=1
fi

if [ -z "$changed" ]; then
	log "containerd's config is up to date"
elif [ -n "${DRY_RUN:-}" ]; then
	log "would restart containerd"
else
	log "restarting containerd (running containers keep running)"
	nsenter -t 1 -m -u -i -n -p -- systemctl restart containerd
fi
log "installed: $(node_agentrun --version | head -n 1)"
