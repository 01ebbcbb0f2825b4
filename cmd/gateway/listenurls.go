package main

import (
	"net"
	"os"
	"strconv"
)

// listenURLs are URLs a person can open for the listen address. A wildcard address (0.0.0.0, [::]) is no
// URL a browser can use: loopback and the machine's host name are offered instead.
func listenURLs(addr net.Addr) []string {
	tcp, ok := addr.(*net.TCPAddr)
	if !ok || !tcp.IP.IsUnspecified() {
		return []string{"http://" + addr.String() + "/"}
	}
	// Go listens dual-stack on a wildcard (0.0.0.0 shows as [::]), so IPv4 loopback always answers.
	port := strconv.Itoa(tcp.Port)
	urls := []string{"http://" + net.JoinHostPort("127.0.0.1", port) + "/"}
	if host, err := os.Hostname(); err == nil && host != "" {
		urls = append(urls, "http://"+net.JoinHostPort(host, port)+"/")
	}
	return urls
}
