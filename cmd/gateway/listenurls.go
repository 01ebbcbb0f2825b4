package main

import (
	"net"
	"os"
	"strconv"
	"strings"
)

// listenURLs are URLs (scheme http or https) a person can open for the listen address. A wildcard address
// (0.0.0.0, [::]) is no URL a browser can use: loopback is offered instead, and the machine's host name when
// the host policy serves it (served reports that).
func listenURLs(scheme string, addr net.Addr, served func(host string) bool) []string {
	tcp, ok := addr.(*net.TCPAddr)
	if !ok || !tcp.IP.IsUnspecified() {
		return []string{scheme + "://" + addr.String() + "/"}
	}
	// Go listens dual-stack on a wildcard (0.0.0.0 shows as [::]), so IPv4 loopback always answers.
	port := strconv.Itoa(tcp.Port)
	urls := []string{scheme + "://" + net.JoinHostPort("127.0.0.1", port) + "/"}
	if host, err := os.Hostname(); err == nil && host != "" && served(host) {
		urls = append(urls, scheme+"://"+net.JoinHostPort(host, port)+"/")
	}
	return urls
}

// hostServed reports whether the host policy answers requests naming host (a name the log may offer): with a
// token and no --allowed-hosts every name is; otherwise only the ones --allowed-hosts lists by name.
func (c *config) hostServed(host string) bool {
	hosts := splitList(c.allowedHosts)
	if c.token != "" && len(hosts) == 0 {
		return true
	}
	for _, h := range hosts {
		if hn, _, err := net.SplitHostPort(h); err == nil {
			h = hn
		}
		if strings.EqualFold(h, host) {
			return true
		}
	}
	return false
}
