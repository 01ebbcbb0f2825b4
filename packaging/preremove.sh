#!/bin/sh
# Stops the service before its binary goes away on removal (deb: "remove", rpm: 0 packages left), not on
# upgrade; the data in /var/lib/acp-gateway stays.
case "$1" in
remove | 0)
	if [ -d /run/systemd/system ]; then
		systemctl disable --now acp-gateway.service || :
	fi
	;;
esac
