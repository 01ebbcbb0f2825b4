//go:build !linux

package main

// becomeSubreaper is Linux only; elsewhere agents' escaped descendants are left to init.
func becomeSubreaper() error { return nil }
