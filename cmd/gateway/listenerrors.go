package main

import (
	"errors"
	"fmt"
	"net"
	"syscall"
)

// checkListenAddr refuses, at parse time, an address net.Listen could never take, naming the flag and the
// value: Go's own "listen tcp: address 99999: invalid port" says neither.
func checkListenAddr(flagName, addr string) error {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("--%s %q: want host:port like 127.0.0.1:8080 (port 0 picks a free one)", flagName, addr)
	}
	if _, err := net.LookupPort("tcp", port); err != nil { // a number up to 65535, or a service name as net.Listen takes
		return fmt.Errorf("--%s %q: the port must be a number from 0 to 65535", flagName, addr)
	}
	return nil
}

// listenError names the flag and the address a listen failed on, and says what usually causes it.
func listenError(flagName, addr string, err error) error {
	var oe *net.OpError
	if errors.As(err, &oe) {
		err = oe.Err // "listen tcp" is what cannot listen means
	}
	why := ""
	switch {
	case errors.Is(err, syscall.EADDRINUSE):
		why = ": another process listens there; stop it or choose another port"
	case errors.Is(err, syscall.EACCES):
		why = ": ports below 1024 need root or CAP_NET_BIND_SERVICE; choose a port above 1023"
	case errors.Is(err, syscall.EADDRNOTAVAIL):
		why = ": no network interface of this machine has that address"
	}
	return fmt.Errorf("--%s %s: cannot listen: %v%s", flagName, addr, err, why)
}
